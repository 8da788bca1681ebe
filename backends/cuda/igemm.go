package cuda

import (
	"fmt"
	"math"
	"strings"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// igemm renders an igemm-wgmma, igemm-mma or igemm-simt launch: the
// matmul's loop over output tiles and its epilogue around the prelude's
// KgWgmma, KgMma or KgSimt, which read each operand as a KgRows when it is
// strided and otherwise through a lambda that evaluates the statement's
// own load at the indices that the element's row and k decompose into (a
// gather; out-of-bounds reads with `??` give the default).
func (e *emitter) igemm(l *lower.Launch) {
	g := lower.MatchIGemm(l.Stmt)
	c := l.Config
	bm, bn := lower.TileShape(l)
	ta, tb := e.cType(g.A.Load.Tensor.DType), e.cType(g.B.Load.Tensor.DType)
	e.printf("  const int64_t kg_M = %s, kg_N = %s, kg_K = %s;\n", e.expr(lower.Extent(g.M)), e.expr(lower.Extent(g.N)), e.expr(lower.Extent(g.K)))
	e.tileCount(bm, bn, g.Batch)
	ak, bk := g.A.KMajor, g.B.KMajor
	simt := l.Template.Name() == "igemm-simt" // tensor-core products too, on a target without tensor cores
	// As for a matmul, the tiles move a strided operand in 16-byte chunks
	// (cp.async on tensor cores, vector loads on CUDA cores) where its
	// rows are 16-byte aligned and its contiguous extent whole chunks (of
	// 8 elements on tensor cores; the simt tile's chunks divide 16 bytes).
	var conds []string
	for _, o := range []struct {
		op   *lower.Operand
		rows string
	}{{g.A, "kg_M"}, {g.B, "kg_N"}} {
		if !o.op.Strided {
			continue
		}
		contiguous := o.rows
		if o.op.KMajor {
			contiguous = "kg_K"
		}
		el := int64(8)
		if simt {
			el = int64(16 / o.op.Load.Tensor.DType.Size())
		}
		conds = append(conds, e.chunkConds(o.op.Load, e.paren(o.op.Ld), contiguous, g.Batch, el)...)
	}
	if !simt {
		if l.Template.Name() == "igemm-wgmma" {
			op := e.wgmmaOp(g.A.Load.Tensor.DType, bn, !ak, !bk)
			e.printf("  using kg_tile_t = KgWgmma<%s, %d, %d, %d, %d, false, %t, %t, %s>;\n", ta, bm, bn, c["WGS"], c["STAGES"], ak, bk, op)
		} else {
			e.printf("  using kg_tile_t = KgMma<%s, %d, %d, %d, %d, %d, %d, %d, %t, %t>;\n", ta, bm, bn, c["BK"], c["WARPS_M"], c["WARPS_N"], c["STAGES"], c["FRAGS"], ak, bk)
		}
		e.printf("  KG_DYNAMIC_SMEM(kg_smem);\n")
		// A gathered operand moves in chunks where they are contiguous
		// (chunkable): its tensor's base and rows 16-byte aligned.
		for _, o := range []*lower.Operand{g.A, g.B} {
			if !o.Strided && e.chunked(o, g.K) {
				t := o.Load.Tensor
				conds = append(conds, fmt.Sprintf("(uintptr_t)%s %% 16 == 0", name(t.Name)),
					fmt.Sprintf("%s %% %d == 0", e.paren(t.Shape[len(t.Shape)-1]), 16/t.DType.Size()))
			}
		}
	} else {
		e.printf("  using kg_tile_t = KgSimt<%s, %s, %s, %d, %t, %t, %d, %d>;\n", ta, tb, e.cType(g.Reduce.T), c["BK"], ak, bk, bm, bn)
	}
	vec := len(conds) > 0
	if vec {
		e.printf("  const bool kg_vec = %s;\n", strings.Join(conds, " && "))
	}
	e.tileLoop(g.Batch)
	e.operand("A", g.A, g.K, g.Batch, !simt)
	e.operand("B", g.B, g.K, g.Batch, !simt)
	acc := e.cType(g.Reduce.T)
	e.printf("    %s kg_acc[kg_tile_t::ACC];\n", acc)
	args := fmt.Sprintf("kg_a, kg_b, kg_M, kg_N, kg_K, kg_tr * %d, kg_tc * %d, kg_acc", bm, bn)
	if !simt {
		run := func(v bool) string {
			va, vb := g.A.Strided || e.chunked(g.A, g.K), g.B.Strided || e.chunked(g.B, g.K)
			return fmt.Sprintf("kg_tile_t::run<%t, %t>(%s, kg_smem);", v && va, v && vb, args)
		}
		if vec {
			e.printf("    if (kg_vec)\n      %s\n    else\n      %s\n", run(true), run(false))
		} else {
			e.printf("    %s\n", run(false))
		}
	} else {
		// The statement's product of one element of each operand.
		e.loads = map[*ir.Load]string{g.A.Load: "kg_x", g.B.Load: "kg_y"}
		body := e.expr(g.Reduce.Body)
		e.loads = nil
		mul := fmt.Sprintf("[](%s kg_x, %s kg_y) -> %s { return %s; }", ta, tb, acc, body)
		run := fmt.Sprintf("kg_tile_t::run(%s, %s);", args, mul)
		if vec {
			e.printf("    if (kg_vec)\n      kg_tile_t::run<%t, %t>(%s, %s);\n    else\n      %s\n", g.A.Strided, g.B.Strided, args, mul, run)
		} else {
			e.printf("    %s\n", run)
		}
	}
	e.epilogue(bm, bn, g.M, g.N, g.Reduce, l.Stmt, storeRun(l.Template.Name()))
}

// operand declares operand ab ("A" or "B") as kg_a or kg_b: a KgRows
// over its tensor for a strided operand, otherwise a KgGather of a lambda
// of the element's stored coordinates, (row, k) when o is K-major and (k,
// row) when not, and a count: it decomposes the row (kg_m or kg_n) into
// o's row indices and k into the reduction's axes, then reads the load
// there and steps the second coordinate's indices, count times. On a
// tensor-core tile (tiled) with CUDA's cp.async, a chunkable operand is a
// KgGatherVec, whose second lambda gives each chunk's address.
func (e *emitter) operand(ab string, o *lower.Operand, ks, batch []*ir.Index, tiled bool) {
	v, row := "kg_a", "kg_m"
	if ab == "B" {
		v, row = "kg_b", "kg_n"
	}
	t := e.cType(o.Load.Tensor.DType)
	stored := []string{indexNames(o.Rows), indexNames(ks)}
	if !o.KMajor {
		stored[0], stored[1] = stored[1], stored[0]
	}
	how := "gathered"
	if o.Strided {
		how = "strided"
	}
	e.printf("    // %s = %s, %s, stored (%s) x (%s)\n", ab, name(o.Load.Tensor.Name), how, stored[0], stored[1])
	if o.Strided {
		off := ""
		if len(batch) > 0 {
			var parts []string
			for _, ix := range batch {
				parts = append(parts, name(ix.Name)+" * "+e.paren(lower.Stride(o.Load, ix)))
			}
			off = " + (" + strings.Join(parts, " + ") + ")"
		}
		e.printf("    const KgRows<%s> %s = {%s%s, %s};\n", t, v, name(o.Load.Tensor.Name), off, e.expr(o.Ld))
		return
	}
	first, second := row, "kg_k"
	fixed, stepped := o.Rows, ks
	if !o.KMajor {
		first, second = second, first
		fixed, stepped = stepped, fixed
	}
	vec := tiled && e.chunked(o, ks)
	gather := "kg_gather<" + t + ">"
	if vec {
		gather = "kg_gather_vec<" + t + ">"
	}
	e.printf("    const auto %s = %s([&](int64_t %s, int64_t %s, int kg_count, %s* kg_v) {\n", v, gather, first, second, t)
	e.decompose("      ", first, first+"rest", fixed)
	e.decomposeAs("      ", "int64_t", second, second+"rest", stepped)
	e.printf("#pragma unroll\n")
	e.printf("      for (int kg_e = 0; kg_e < 8; ++kg_e) {\n")
	e.printf("        if (kg_e < kg_count) {\n")
	e.printf("          kg_v[kg_e] = %s;\n", e.read(o.Load, o.Checked))
	e.printf("          %s\n", e.step(stepped))
	e.printf("        }\n")
	e.printf("      }\n")
	if !vec {
		e.printf("    });\n")
		return
	}
	// The chunk at (first, second) as one contiguous run: its address,
	// and whether the load reads there.
	access, conds := e.readParts(o.Load, o.Checked)
	ok := "true"
	if len(conds) > 0 {
		ok = strings.Join(conds, " && ")
	}
	e.printf("    }, [&](int64_t %s, int64_t %s, bool* kg_ok) -> const %s* {\n", first, second, t)
	e.decompose("      ", first, first+"rest", fixed)
	e.decompose("      ", second, second+"rest", stepped)
	e.printf("      *kg_ok = %s;\n", ok)
	e.printf("      return &%s;\n", access)
	e.printf("    }, %s);\n", name(o.Load.Tensor.Name))
}

// chunked reports whether the tensor-core tiles move gathered operand o
// in 16-byte chunks: on CUDA (cp.async), where chunkable.
func (e *emitter) chunked(o *lower.Operand, ks []*ir.Index) bool {
	return e.d == CUDA && chunkable(o, ks, 16/int64(o.Load.Tensor.DType.Size()))
}

// chunkable reports whether every aligned run of el consecutive
// elements along a gathered operand's stepped coordinate (K when it is
// K-major, its rows otherwise) is contiguous in memory and read or
// defaulted as a whole, so that it can move as one 16-byte copy: the
// load's last index is the stepped coordinate's fastest index (from 0,
// its extent a constant multiple of el, so that an aligned run never
// wraps it), which no other index and no bounds test involves, and the
// default, if any, is zero (what a copy of nothing leaves). The run-time
// rest (an aligned base, rows of whole runs) is igemm's kg_vec.
func chunkable(o *lower.Operand, ks []*ir.Index, el int64) bool {
	if o.Strided || el < 1 {
		return false
	}
	stepped := ks
	if !o.KMajor {
		stepped = o.Rows
	}
	fast := stepped[len(stepped)-1]
	idx := o.Load.Index
	last := len(idx) - 1
	if ref, ok := idx[last].(*ir.IndexRef); !ok || ref.Index != fast {
		return false
	}
	if lo, ok := lower.Simplify(fast.Lo).(*ir.Const); !ok || lo.I != 0 {
		return false
	}
	if n, ok := lower.Simplify(fast.Hi).(*ir.Const); !ok || n.I%el != 0 {
		return false
	}
	for _, x := range idx[:last] {
		if lower.Mentions(x, fast) {
			return false
		}
	}
	if o.Load.Default != nil {
		if o.Checked == nil || o.Checked[last] || !isZero(o.Load.Default) {
			return false
		}
	}
	return true
}

// isZero reports whether x is a constant +0 (through conversions).
func isZero(x ir.Expr) bool {
	for {
		c, ok := x.(*ir.Cast)
		if !ok {
			break
		}
		x = c.X
	}
	c, ok := x.(*ir.Const)
	return ok && c.I == 0 && c.F == 0 && !math.Signbit(c.F)
}

// step advances the indices ix, the last fastest, to the next point in
// order: a statement.
func (e *emitter) step(ix []*ir.Index) string {
	s := "++" + name(ix[0].Name) + ";"
	for _, x := range ix[1:] {
		n := name(x.Name)
		s = fmt.Sprintf("if (++%s == %s) { %s = 0; %s }", n, e.paren(x.Hi), n, s)
	}
	return s
}

// indexNames lists the names of ix, comma-separated.
func indexNames(ix []*ir.Index) string {
	var names []string
	for _, x := range ix {
		names = append(names, x.Name)
	}
	return strings.Join(names, ", ")
}
