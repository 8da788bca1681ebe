package lower

import (
	"fmt"
	"slices"

	"kgen.dev/kgen/ir"
)

// A column group is softmax or a norm over an outer (strided) axis as one
// launch: lets that are column reductions (MatchColumns) over one axis,
// then the elementwise statement that reads them,
//
//	let m[o..., c] = op[k'](... X[o..., k', c] ...)
//	Y[o..., k, c] = f(X[o..., k, c], m[o..., c], ...)
//
// (torch.softmax(x, dim=1) of a [B, D, T] tensor; an RMS norm over the
// features of [N, F, H, W], its H and W collapsed into one axis). Each
// block takes a strip of columns at one outer point and every point of
// the reduced axis, computes the lets into registers, and writes the
// strip's outputs: the input is read from memory once, not once per let
// and again for the output.

// ColGroup is a column group's shape: the final statement's indices are
// Outer, then K (the reduced axis's counterpart), then C (the columns).
type ColGroup struct {
	Lets  []*ir.Stmt
	Final *ir.Stmt
	Outer []*ir.Index
	K, C  *ir.Index
}

// MatchColGroup is l's column group (its Fused lets and Stmt), or nil.
func MatchColGroup(l *Launch) *ColGroup {
	f := l.Stmt
	if len(l.Fused) == 0 || len(f.Index) < 2 {
		return nil
	}
	o := len(f.Index) - 2
	return &ColGroup{Lets: l.Fused, Final: f, Outer: f.Index[:o], K: f.Index[o], C: f.Index[o+1]}
}

// colGroupOK reports whether members then final make a column group: each
// member a column reduction over one axis whose range is final's K's,
// indexed [o..., c] over final's outer and column ranges, and read only by
// later members and final, at the reader's own [o..., c].
// On a tile target (Triton), the reduced axis must be a known length of at
// most MaxTileColPoints, which one program's tile holds.
func colGroupOK(k *ir.Kernel, members []*ir.Stmt, final *ir.Stmt, lim Limits) bool {
	if len(members) == 0 || ir.Classify(final) != ir.Elementwise || len(final.Index) < 2 || !unguarded(final.Value) {
		return false
	}
	o := len(final.Index) - 2
	K, C := final.Index[o], final.Index[o+1]
	if n, ok := constExtent([]*ir.Index{K}); lim.Tiles && (!ok || n > MaxTileColPoints) {
		return false
	}
	sameRange := func(a, b *ir.Index) bool {
		return ir.Format(a.Lo) == ir.Format(b.Lo) && ir.Format(a.Hi) == ir.Format(b.Hi)
	}
	for _, m := range members {
		if m.Target.Kind != ir.Let || len(m.Index) != o+1 {
			return false
		}
		cm := MatchColumns(m)
		if cm == nil || len(cm.Reduce.Axes) != 1 || !sameRange(cm.Reduce.Axes[0], K) {
			return false
		}
		for d := range o {
			if !sameRange(m.Index[d], final.Index[d]) {
				return false
			}
		}
		if !sameRange(m.Index[o], C) {
			return false
		}
	}
	// Each member is read only by later members and final, at the
	// reader's [o..., c].
	inGroup := append(slices.Clone(members), final)
	for mi, m := range members {
		for _, s := range k.Stmts {
			reads, atPoint := false, true
			at := s.Index
			if s == final {
				at = append(slices.Clone(final.Index[:o]), C)
			}
			ir.Walk(s.Value, func(e ir.Expr) bool {
				ld, ok := e.(*ir.Load)
				if !ok || ld.Tensor != m.Target {
					return true
				}
				reads = true
				if ld.Default != nil || len(ld.Index) != len(at) {
					atPoint = false
					return true
				}
				for d, ix := range ld.Index {
					if ref, ok := ix.(*ir.IndexRef); !ok || ref.Index != at[d] {
						atPoint = false
					}
				}
				return true
			})
			if !reads {
				continue
			}
			if pos := slices.Index(inGroup, s); pos <= mi || !atPoint {
				return false
			}
		}
	}
	return true
}

// colGroup computes a column group with a block per tile: a strip of
// TX*VEC consecutive columns at one outer point. Thread tx + TX*ty takes
// the columns tx*VEC .. tx*VEC + VEC - 1 (VEC-wide vector accesses where
// the sizes and pointers allow) at the reduced points ty, ty + TY, ...;
// where those points are known and few enough (at most MaxCached values a
// thread), the inputs read at [o..., k, c] are loaded into registers once
// and every let and the output read them there. Each let's partial results
// combine across the TY rows of threads in a fixed order (as col-reduce's
// do), and its value per column stays in registers for the lets and the
// output after it.
type colGroup struct{}

func (colGroup) Name() string            { return "col-group" }
func (colGroup) Accepts(s *ir.Stmt) bool { return false } // only for groups that colGroupOK forms
func (colGroup) Space() map[string][]int64 {
	return map[string][]int64{
		"TX":            {1, 2, 4, 8, 16, 32},
		"TY":            {8, 16, 32, 64, 128, 256, 512, 1024},
		"VEC":           {1, 2, 4, 8},
		"BLOCKS_PER_SM": blocksPerSM,
	}
}

// ColGroupCache is the number of reduced points a thread of a column
// group keeps in registers (for each of its VEC columns), or 0 where the
// reduced axis's length is unknown or the values would take more than
// MaxCached registers.
func ColGroupCache(l *Launch) int64 {
	g := MatchColGroup(l)
	n, ok := constExtent([]*ir.Index{g.K})
	ty := l.Config["TY"]
	if !ok || ty <= 0 {
		return 0
	}
	p := (n + ty - 1) / ty
	if p*max(l.Config["VEC"], 1) > MaxCached {
		return 0
	}
	return p
}

// Default: VEC for 8 bytes of the widest input (fewer where the columns
// are a known count it does not divide); TY the fewest rows of threads
// (at least 8) that keep a thread's points within MaxCached registers, so
// that each thread has as many loads in flight as it can hold; TX as wide
// as strips of up to 256 bytes and blocks of up to 512 threads allow,
// within the columns. Measured on the H100
// (testsuite/results/2026-11-26-h100-s12-colgroup/sweep-colgroup.txt):
// the RMS norm over the 64 features of 16 x 64 x 256 x 256 f32 took 229
// us with strips of 64 bytes and 64 rows of threads (TX=4, TY=64), 187
// (96% of the copy bandwidth) with 16-byte vectors, TX=16, TY=8; softmax
// over the middle axis of 64 x 1024 x 256 f32, 70.7 us with TX=2, TY=128,
// 60.3 with TX=4 and 16-byte vectors, 57.4 with this default's 8-byte
// ones (VEC=2, TX=8, TY=64; sweep-misc12.txt), which took the norm from
// 186.8 to 185.9 us (TX=32, TY=8; transpose-vec/).
func (colGroup) Default(l *Launch) Config {
	g := MatchColGroup(l)
	size := widestElement(l)
	vec := min(8, max(1, 8/size))
	cols, colsKnown := constExtent([]*ir.Index{g.C})
	if colsKnown {
		for vec > 1 && cols%vec != 0 {
			vec /= 2
		}
	}
	ty := int64(8)
	if n, ok := constExtent([]*ir.Index{g.K}); ok {
		for ty < 1024 && (n+ty-1)/ty*vec > MaxCached {
			ty *= 2
		}
	} else {
		ty = 128
	}
	tx := int64(1)
	for tx < 32 && 2*tx*vec*size <= 256 && 2*tx*ty <= 512 && (!colsKnown || 2*tx*vec <= cols+vec-1) {
		tx *= 2
	}
	for tx*ty%l.Target.Warp() != 0 {
		tx *= 2
	}
	return Config{"TX": tx, "TY": ty, "VEC": vec}
}

// ColGroupSmem is the static shared memory of a column group's combines:
// per accumulation type, ColParts rows of the strip's columns.
func ColGroupSmem(l *Launch) int64 {
	c := l.Config
	total := int64(0)
	for _, t := range ColGroupAccTypes(l) {
		total += ColParts(l) * c["TX"] * c["VEC"] * int64(t.Size())
	}
	return total
}

// ColGroupAccTypes lists the accumulation types of a column group's lets,
// each once, in order.
func ColGroupAccTypes(l *Launch) []ir.DType {
	var ts []ir.DType
	for _, s := range l.Fused {
		for _, r := range ir.TopReductions(s.Value) {
			if !slices.Contains(ts, r.T) {
				ts = append(ts, r.T)
			}
		}
	}
	return ts
}

// Check: whole warps, and the combines' partial results within the
// static shared memory a block may declare.
func (colGroup) Check(l *Launch) error {
	if err := checkOccupancy(l); err != nil {
		return err
	}
	return checkCombine(l, ColGroupSmem(l))
}

// ColGroupTiles is the number of tiles of a column group: strips of
// TX*VEC columns at every outer point.
func ColGroupTiles(l *Launch) ir.Expr {
	g := MatchColGroup(l)
	return stripTiles(g.Outer, g.C, l.Config["TX"]*l.Config["VEC"])
}

func (colGroup) Grid(l *Launch) Grid {
	return occupancy(l, Grid{Blocks: capBlocks(ColGroupTiles(l)), Threads: l.Config["TX"] * l.Config["TY"]})
}

// tileColGroup is the column group on a tile target (Triton): a program
// per outer point and BLOCK_N consecutive columns holds every reduced
// point of its columns in one BLOCK_K x BLOCK_N tile (BLOCK_K covers the
// reduced axis), loads the input once, reduces each let down the tile's
// rows into a [1, BLOCK_N] value and stores the tile of outputs.
type tileColGroup struct{}

func (tileColGroup) Name() string            { return "col-group" }
func (tileColGroup) Accepts(s *ir.Stmt) bool { return false } // only for groups that colGroupOK forms
func (tileColGroup) Space() map[string][]int64 {
	return map[string][]int64{"BLOCK_K": {8, 16, 32, 64, 128, 256, 512, 1024}, "BLOCK_N": {8, 16, 32, 64, 128, 256}, "num_warps": warpSpace}
}

// MaxTileColPoints is the longest reduced axis a tile column group takes:
// a tile of 16 columns (64 bytes of f32 rows) of such points holds
// MaxRowBlock elements.
const MaxTileColPoints = MaxRowBlock / 16

// Default: BLOCK_K the reduced points rounded up to a power of two; as
// many columns as keep the tile within MaxRowBlock elements, up to 128
// (and the columns rounded up to a power of two); a warp per 1024
// elements of the tile (32 a thread). Measured on the H100
// (testsuite/results/2026-11-26-h100-s12-colgroup/triton/): the RMS norm
// over the 64 features of 16 x 64 x 256 x 256 f32 took 212.6 us with 16
// warps for its 64 x 128 tile, 186.4 (96% of the copy bandwidth) with 8;
// softmax over the middle axis of 64 x 1024 x 256 f32, 62.0 us with 16
// warps for 1024 x 16 (60.6 with 8 for 1024 x 8).
func (tileColGroup) Default(l *Launch) Config {
	g := MatchColGroup(l)
	n, _ := constExtent([]*ir.Index{g.K})
	bk := max(8, nextPow2(n))
	bn := min(int64(128), max(8, MaxRowBlock/bk))
	if cols, ok := constExtent([]*ir.Index{g.C}); ok {
		bn = min(bn, max(8, nextPow2(cols)))
	}
	return Config{"BLOCK_K": bk, "BLOCK_N": bn, "num_warps": min(16, max(1, bk*bn/1024))}
}

// Check: the tile holds every reduced point, at most maxTileThread
// elements a thread.
func (tileColGroup) Check(l *Launch) error {
	if err := checkTileThreads(l, l.Config["BLOCK_K"]*l.Config["BLOCK_N"]); err != nil {
		return err
	}
	n, ok := constExtent([]*ir.Index{MatchColGroup(l).K})
	if !ok || n > l.Config["BLOCK_K"] {
		return fmt.Errorf("BLOCK_K = %d must hold the %d reduced points", l.Config["BLOCK_K"], n)
	}
	return nil
}

func (tileColGroup) Grid(l *Launch) Grid {
	g := MatchColGroup(l)
	return Grid{Blocks: stripTiles(g.Outer, g.C, l.Config["BLOCK_N"]), Threads: 32 * l.Config["num_warps"]}
}
