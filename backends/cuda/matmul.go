package cuda

import (
	"fmt"
	"strings"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// matmul renders a matmul-wgmma, matmul-mfma, matmul-mma or matmul-simt
// launch: a grid-stride loop over output tiles (grouped for L2 reuse), the
// prelude's KgWgmma, KgMfma (HIP), KgMma or KgSimt computing each tile's
// sums into registers, then the statement's epilogue stored for each
// accumulator inside the bounds.
func (e *emitter) matmul(l *lower.Launch) {
	m := lower.MatchMatmul(l.Stmt)
	c := l.Config
	bm, bn := lower.TileShape(l)
	// The simt tile takes tensor-core products too where the target has
	// no tensor cores; it multiplies as the statement says.
	simt := l.Template.Name() == "matmul-simt"
	ta, tb := e.cType(m.A.Tensor.DType), e.cType(m.B.Tensor.DType)
	// lda, ldb: the element distance between an operand's stored rows.
	lda, ldb := lower.Stride(m.A, m.K), lower.Stride(m.B, m.K)
	if m.AKMajor {
		lda = lower.Stride(m.A, m.M[len(m.M)-1])
	}
	if m.BKMajor {
		ldb = lower.Stride(m.B, m.N[len(m.N)-1])
	}
	extK := lower.Extent([]*ir.Index{m.K})
	e.printf("  const int64_t kg_M = %s, kg_N = %s, kg_K = %s;\n", e.expr(lower.Extent(m.M)), e.expr(lower.Extent(m.N)), e.expr(extK))
	e.printf("  const int64_t kg_lda = %s, kg_ldb = %s;\n", e.expr(lda), e.expr(ldb))
	e.tileCount(bm, bn, m.Batch)
	ak, bk := m.AKMajor, m.BKMajor
	tma := l.Template.Name() == "matmul-wgmma" && c["TMA"] == 1
	if !simt {
		switch l.Template.Name() {
		case "matmul-wgmma":
			op := e.wgmmaOp(m.A.Tensor.DType, bn, !ak, !bk)
			e.printf("  using kg_tile_t = KgWgmma<%s, %d, %d, %d, %d, %t, %t, %t, %s>;\n", ta, bm, bn, c["WGS"], c["STAGES"], tma, ak, bk, op)
		case "matmul-mfma":
			e.printf("  using kg_tile_t = KgMfma<%s, %d, %d, %d, %d, %d, %t, %t>;\n", ta, bm, bn, c["BK"], c["WAVES_M"], c["WAVES_N"], ak, bk)
		default:
			e.printf("  using kg_tile_t = KgMma<%s, %d, %d, %d, %d, %d, %d, %d, %t, %t>;\n", ta, bm, bn, c["BK"], c["WARPS_M"], c["WARPS_N"], c["STAGES"], c["FRAGS"], ak, bk)
		}
		e.printf("  KG_DYNAMIC_SMEM(kg_smem);\n")
	} else {
		e.printf("  using kg_tile_t = KgSimt<%s, %s, %s, %d, %t, %t, %d, %d>;\n", ta, tb, e.cType(m.Reduce.T), c["BK"], ak, bk, bm, bn)
	}
	// Every tile moves operands in chunks of up to 16 bytes where they
	// allow (cp.async; a vector load for mfma and simt): every operand row
	// and batch offset must start 16-byte aligned, and each contiguous
	// extent must be whole 16-byte chunks, for a chunk to be all in or all
	// out (the simt tile's smaller chunks divide them).
	conds := e.chunkConds(m.A, "kg_lda", map[bool]string{true: "kg_K", false: "kg_M"}[ak], m.Batch, int64(16/m.A.Tensor.DType.Size()))
	conds = append(conds, e.chunkConds(m.B, "kg_ldb", map[bool]string{true: "kg_K", false: "kg_N"}[bk], m.Batch, int64(16/m.B.Tensor.DType.Size()))...)
	e.printf("  const bool kg_vec = %s;\n", strings.Join(conds, " && "))
	if tma {
		// The producer warpgroup loads every tile of the block; the
		// consumers follow the same tiles through the ring.
		e.printf("  const auto kg_ring = kg_tile_t::setup(kg_smem);\n")
		e.printf("  if (kg_tile_t::producer()) {\n")
		e.printf("    kg_tile_t::produce(kg_vec, %s, %s, kg_lda, kg_ldb, kg_M, kg_N, kg_K, kg_tm, kg_tn, kg_tiles, kg_ring, kg_ws + %s);\n",
			name(m.A.Tensor.Name), name(m.B.Tensor.Name), e.expr(e.plan.ScratchOffset()))
		e.printf("    return;\n  }\n")
		e.printf("  kg_tile_t::consumer();\n")
		e.printf("  int kg_stage = 0;\n  unsigned kg_phase = 0;\n")
	}
	e.tileLoop(m.Batch)
	offA, offB := "", ""
	if len(m.Batch) > 0 {
		var pa, pb []string
		for _, ix := range m.Batch {
			pa = append(pa, name(ix.Name)+" * "+e.paren(lower.Stride(m.A, ix)))
			pb = append(pb, name(ix.Name)+" * "+e.paren(lower.Stride(m.B, ix)))
		}
		offA, offB = " + ("+strings.Join(pa, " + ")+")", " + ("+strings.Join(pb, " + ")+")"
	}
	e.printf("    const %s* kg_a = %s%s;\n", ta, name(m.A.Tensor.Name), offA)
	e.printf("    const %s* kg_b = %s%s;\n", tb, name(m.B.Tensor.Name), offB)
	acc := e.cType(m.Reduce.T)
	e.printf("    %s kg_acc[kg_tile_t::ACC];\n", acc)
	args := fmt.Sprintf("kg_a, kg_b, kg_lda, kg_ldb, kg_M, kg_N, kg_K, kg_tr * %d, kg_tc * %d, kg_acc", bm, bn)
	switch {
	case tma:
		e.printf("    if (kg_vec)\n      kg_tile_t::consume(%s, kg_ring, kg_stage, kg_phase);\n    else\n      kg_tile_t::run<false>(%s, kg_smem);\n", args, args)
	case !simt:
		e.printf("    if (kg_vec)\n      kg_tile_t::run<true>(%s, kg_smem);\n    else\n      kg_tile_t::run<false>(%s, kg_smem);\n", args, args)
	default:
		// The statement's product of one element of each operand.
		e.loads = map[*ir.Load]string{m.A: "kg_x", m.B: "kg_y"}
		body := e.expr(m.Reduce.Body)
		e.loads = nil
		mul := fmt.Sprintf("[](%s kg_x, %s kg_y) -> %s { return %s; }", ta, tb, acc, body)
		e.printf("    if (kg_vec)\n      kg_tile_t::run<true, true>(%s, %s);\n    else\n      kg_tile_t::run(%s, %s);\n", args, mul, args, mul)
	}
	e.epilogue(bm, bn, m.M, m.N, m.Reduce, l.Stmt, storeRun(l.Template.Name()))
}

// storeRun is how many consecutive columns a thread's consecutive
// accumulators hold in a template's tile, from the first of them: four
// in the CUDA-core tile, pairs in the tensor-core tiles (mma.sync's and
// wgmma's fragments), 0 for the others (mfma's run down rows).
func storeRun(template string) int64 {
	switch template {
	case "matmul-simt", "igemm-simt":
		return 4
	case "matmul-wgmma", "matmul-mma", "igemm-wgmma", "igemm-mma":
		return 2
	}
	return 0
}

// chunkConds are the conditions for operand load x, stored as rows of ld
// elements whose contiguous extent is contiguous, to move in 16-byte
// chunks of el elements: its tensor's base and rows 16-byte aligned, the
// extent and the offset of every batch index whole chunks.
func (e *emitter) chunkConds(x *ir.Load, ld, contiguous string, batch []*ir.Index, el int64) []string {
	conds := []string{fmt.Sprintf("(uintptr_t)%s %% 16 == 0", name(x.Tensor.Name)),
		fmt.Sprintf("%s %% %d == 0", ld, el), fmt.Sprintf("%s %% %d == 0", contiguous, el)}
	for _, ix := range batch {
		conds = append(conds, fmt.Sprintf("%s %% %d == 0", e.paren(lower.Stride(x, ix)), el))
	}
	return conds
}

// tileCount declares the number of bm x bn tiles of a kg_M x kg_N product,
// kg_tiles (times the batch).
func (e *emitter) tileCount(bm, bn int64, batch []*ir.Index) {
	e.printf("  const int64_t kg_tm = (kg_M + %d) / %d, kg_tn = (kg_N + %d) / %d;\n", bm-1, bm, bn-1, bn)
	e.printf("  const int64_t kg_tiles = %s * kg_tm * kg_tn;\n", e.paren(lower.Extent(batch)))
}

// tileLoop opens the grid-stride loop over tiles: tile row kg_tr and
// column kg_tc (grouped for L2 reuse), and the batch indices.
func (e *emitter) tileLoop(batch []*ir.Index) {
	e.printf("  for (int64_t kg_t = blockIdx.x; kg_t < kg_tiles; kg_t += gridDim.x) {\n")
	e.printf("    int64_t kg_tr, kg_tc;\n")
	e.printf("    kg_tile_of(kg_t %% (kg_tm * kg_tn), kg_tm, kg_tn, &kg_tr, &kg_tc);\n")
	if len(batch) > 0 {
		e.printf("    const int64_t kg_bt = kg_t / (kg_tm * kg_tn);\n")
		e.decompose("    ", "kg_bt", "kg_brest", batch)
	}
}

// epilogue stores the statement for each accumulator of the tile inside
// the bounds, the sum r in the accumulator, and closes the tile loop.
// Where a tile's accumulators come in runs of consecutive columns (run of
// them, storeRun), a statement whose output's last index is the only
// column index stores each run with one vector store where the output's
// base and rows are aligned to it and whole runs fit in the columns
// (checked at run time), so that a warp writes fewer, fuller sectors.
func (e *emitter) epilogue(bm, bn int64, rows, cols []*ir.Index, r *ir.Reduce, s *ir.Stmt, run int64) {
	t := s.Target
	el := int64(t.DType.Size())
	vector := run > 1 && len(cols) == 1 && len(s.Index) > 0 && s.Index[len(s.Index)-1] == cols[0] && run*el <= 16
	indent := "    "
	// The stores start from the tile's first row and column, hidden from
	// nvcc 11's optimizer (kg_nvcc11_opaque): where a grid has few tiles,
	// nvcc 11.8 carries their small ranges into the unrolled stores' index
	// arithmetic, which its cicc then refuses ("unsupported operation";
	// testsuite/corpus/compile-s190013.kg). Later compilers see them: on
	// the H100 with nvcc 13.0, hiding them made igemm-simt convolutions of
	// short K up to 1.65x slower (testsuite/results/2026-11-27-h100-s20-opaque/).
	e.printf("    const int64_t kg_em = kg_nvcc11_opaque(kg_tr * %d), kg_en = kg_nvcc11_opaque(kg_tc * %d);\n", bm, bn)
	if vector {
		last := e.paren(t.Shape[len(t.Shape)-1])
		e.printf("    if ((uintptr_t)%s %% %d == 0 && %s %% %d == 0 && kg_N %% %d == 0) {\n", name(t.Name), run*el, last, run, run)
		e.printf("#pragma unroll\n")
		e.printf("      for (int kg_g = 0; kg_g < kg_tile_t::ACC; kg_g += %d) {\n", run)
		e.printf("        int kg_r, kg_c;\n")
		e.printf("        kg_tile_t::coord(kg_g, &kg_r, &kg_c);\n")
		e.printf("        const int64_t kg_m = kg_em + kg_r, kg_n0 = kg_en + kg_c;\n")
		e.printf("        if (kg_m < kg_M && kg_n0 < kg_N) {\n")
		e.decomposeBounded("          ", "kg_m", "kg_mrest", rows)
		e.printf("          KgVec<%s, %d> kg_v;\n", e.cType(t.DType), run)
		e.printf("#pragma unroll\n")
		e.printf("          for (int kg_j = 0; kg_j < %d; ++kg_j) {\n", run)
		e.printf("            const int64_t kg_n = kg_n0 + kg_j;\n")
		e.decomposeBounded("            ", "kg_n", "kg_nrest", cols)
		e.reduced = map[*ir.Reduce]string{r: "kg_acc[kg_g + kg_j]"}
		e.printf("            kg_v.v[kg_j] = %s;\n", e.expr(s.Value))
		e.reduced = nil
		e.printf("          }\n")
		// Stored at the run's first column.
		refs := lower.Refs(s.Index)
		e.printf("          {\n")
		e.printf("            const int64_t kg_n = kg_n0;\n")
		e.decomposeBounded("            ", "kg_n", "kg_nrest", cols)
		e.printf("            %s = kg_v;\n", vecAt(e.cType(t.DType), run, name(t.Name), e.linear(refs, t.Shape)))
		e.printf("          }\n")
		e.printf("        }\n")
		e.printf("      }\n")
		e.printf("    } else {\n")
		indent = "      "
	}
	e.printf("#pragma unroll\n")
	e.printf("%sfor (int kg_f = 0; kg_f < kg_tile_t::ACC; ++kg_f) {\n", indent)
	e.printf("%s  int kg_r, kg_c;\n", indent)
	e.printf("%s  kg_tile_t::coord(kg_f, &kg_r, &kg_c);\n", indent)
	e.printf("%s  const int64_t kg_m = kg_em + kg_r, kg_n = kg_en + kg_c;\n", indent)
	e.printf("%s  if (kg_m < kg_M && kg_n < kg_N) {\n", indent)
	e.decomposeBounded(indent+"    ", "kg_m", "kg_mrest", rows)
	e.decomposeBounded(indent+"    ", "kg_n", "kg_nrest", cols)
	e.reduced = map[*ir.Reduce]string{r: "kg_acc[kg_f]"}
	e.store(indent+"    ", s)
	e.reduced = nil
	e.printf("%s  }\n", indent)
	e.printf("%s}\n", indent)
	if vector {
		e.printf("    }\n")
	}
	e.printf("  }\n")
}
