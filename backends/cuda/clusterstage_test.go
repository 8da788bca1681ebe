package cuda

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kgen.dev/kgen/lower"
)

// TestClusterStagedRows: on a target with clusters, the rows of
// testsuite/cluster_rows.kg, too long for a block's shared memory and for
// the registers of the clusters that would stream them, are staged by
// default across the fewest blocks of a cluster whose pieces fit
// (STAGE=1, CLUSTER 8) where streaming would read them three times (the
// softmaxes), and not where it reads them twice (the norms: mean and
// squared deviations in one pass, then the outputs). Staged so, by
// default or told to (the fewest blocks that fit, up to 16), the pieces
// cover the row, each block copies, reduces and stores its own piece,
// and nvcc, where there is one, compiles the kernels for sm_90. On a
// target without clusters nothing is staged so. The GPU runs them
// against the interpreter (testsuite/results/2026-12-06-h100-s34-cluster-stage/).
func TestClusterStagedRows(t *testing.T) {
	text, err := os.ReadFile("../../testsuite/cluster_rows.kg")
	if err != nil {
		t.Fatal(err)
	}
	sm90 := sm90a
	sm90.Wgmma = false
	byDefault := map[string]bool{"softmax_odd": true, "softmax_f16_odd": true, "softmax_256k": true}
	var plans []*lower.Plan
	for _, p := range plansFor(t, "cluster_rows.kg", string(text), sm90) {
		if p.Env == nil {
			continue
		}
		if len(p.Launches) != 1 {
			t.Fatalf("%s: %d launches, want one row-reduce", p.Name, len(p.Launches))
		}
		l := p.Launches[0]
		staged := l.Config["STAGE"] == 1 && l.Config["CLUSTER"] > 1
		if staged != byDefault[p.Name] {
			t.Errorf("%s: %s, staged by a cluster: %v, want %v", p.Name, l.Config, staged, byDefault[p.Name])
		}
		if !staged {
			for k := int64(2); k <= 16; k *= 2 {
				c := lower.Config{"STAGE": 1, "CLUSTER": k, "THREADS": 1024, "PREFETCH": 0, "BLOCK_ROWS": 1, "VEC": 1}
				if _, err := lower.Override(p, c, sm90); err == nil {
					break
				}
			}
			if l = p.Launches[0]; l.Config["STAGE"] != 1 || l.Config["CLUSTER"] < 2 {
				t.Errorf("%s: no cluster of up to 16 stages its rows (%s)", p.Name, l.Config)
				continue
			}
		}
		c := l.Config["CLUSTER"]
		n, _, ok := lower.RowStage(l)
		smem := lower.RowStageSmem(l)
		if !ok || smem > sm90.MaxSmem || l.Grid().Smem != smem {
			t.Errorf("%s: staged %v, %d bytes a block (grid %d), at most %d", p.Name, ok, smem, l.Grid().Smem, sm90.MaxSmem)
		}
		if piece := lower.RowStagePiece(n, c); piece*c < n || piece%16 != 0 {
			t.Errorf("%s: pieces of %d for a row of %d in %d blocks", p.Name, piece, n, c)
		}
		half := *l
		half.Config = maps.Clone(l.Config)
		half.Config["CLUSTER"] = c / 2
		if lower.RowStageSmem(&half) <= sm90.MaxSmem {
			t.Errorf("%s: clusters of %d, but %d blocks' pieces fit", p.Name, c, c/2)
		}
		src := Emit([]*lower.Plan{p})
		for _, want := range []string{
			fmt.Sprintf("__cluster_dims__(%d, 1, 1)", c),
			fmt.Sprintf("kg_lo = (int)(blockIdx.x %% %d) * %d", c, lower.RowStagePiece(n, c)),
			"kg_s_X = kg_sb_X - kg_clo_X * ",
			"for (int kg_c0 = (kg_lo + kg_sh_X) / ",
			"kg_cluster_reduce<",
		} {
			if !strings.Contains(src, want) {
				t.Errorf("%s: no %q in the source", p.Name, want)
			}
		}
		// The manifest tells a build system the launch's cluster, whose
		// rows stride by the grid.
		if ml := lower.Describe(p, "").Launches[0]; ml.Cluster != c {
			t.Errorf("%s: the manifest's cluster %d, want %d", p.Name, ml.Cluster, c)
		}
		// Each reduction of a row takes a turn of its own: two under one
		// turn share a slot of kg_cluster_reduce's results, which a block
		// may then overwrite while another block still reads it (a max
		// and then a sum, a mean and then the squares, both did).
		if calls, turns := strings.Count(src, "kg_cluster_reduce<"), strings.Count(src, "kg_turn++)"); calls == 0 || turns != calls {
			t.Errorf("%s: %d cluster reductions, %d of them a turn of their own", p.Name, calls, turns)
		}
		plans = append(plans, p)
	}
	for _, p := range plansFor(t, "cluster_rows.kg", string(text), sm80) {
		for i, l := range p.Launches {
			if l.Config["STAGE"] == 1 && l.Config["CLUSTER"] > 1 {
				t.Errorf("sm_80 %s: %s", p.Name, l.Config)
			}
			if c := lower.Describe(p, "").Launches[i].Cluster; c != 0 {
				t.Errorf("sm_80 %s: the manifest's cluster %d", p.Name, c)
			}
		}
	}
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Log("no nvcc on PATH: the kernels are not compiled")
		return
	}
	dir := t.TempDir()
	cu := filepath.Join(dir, "cluster_rows.cu")
	if err := os.WriteFile(cu, []byte(Emit(plans)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(nvcc, "-arch=sm_90", "-cubin", "-o", filepath.Join(dir, "c.cubin"), cu).CombinedOutput(); err != nil {
		t.Fatalf("nvcc: %v\n%s", err, out)
	}
}
