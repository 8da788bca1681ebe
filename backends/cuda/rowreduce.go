package cuda

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// rowReduce renders a row-reduce launch: a block per row (grid-stride
// over rows), or with CLUSTER > 1 a cluster of blocks per row, or with
// BLOCK_ROWS > 1 a group of THREADS / BLOCK_ROWS threads per row,
// BLOCK_ROWS rows a block; each fused let's reductions are split across
// the row's threads and combined by kg_block_reduce (shuffles within
// warps, shared memory across them), kg_cluster_reduce (then the blocks'
// results through distributed shared memory) or kg_group_reduce (shuffles
// within the group); the let's value then lives in a register every
// thread holds; finally the threads share the row's output elements, or
// the row's first thread writes its single result.
func (e *emitter) rowReduce(l *lower.Launch) {
	e.regs, e.reduced = map[*ir.Tensor]string{}, map[*ir.Reduce]string{}
	aliases := lower.RowAliases(l)
	var stmts []*ir.Stmt
	for _, s := range l.Fused {
		stmts = append(stmts, &ir.Stmt{Target: s.Target, Index: s.Index, Value: ir.Substitute(s.Value, aliases)})
	}
	final := l.Stmt
	stmts = append(stmts, final)
	// One shared scratch array per accumulation type.
	var accTypes []ir.DType
	for _, s := range stmts {
		for _, r := range ir.TopReductions(s.Value) {
			if !slices.Contains(accTypes, r.T) {
				accTypes = append(accTypes, r.T)
			}
		}
	}
	if lower.RowsPerBlock(l) > 1 {
		e.group = lower.RowThreads(l)
	}
	for _, t := range accTypes {
		if e.group == 0 {
			e.printf("  __shared__ %s kg_smem_%s[32];\n", e.cType(t), t)
		}
	}
	e.printf("  const int64_t kg_rows = %s;\n", e.expr(lower.Rows(l)))
	// A row's threads: the block's, or the cluster's blocks' in rank order.
	e.cluster = max(l.Config["CLUSTER"], 1)
	e.rowTid, e.rowThreads = "threadIdx.x", "blockDim.x"
	first, step := "blockIdx.x", "gridDim.x"
	if e.cluster > 1 {
		e.printf("  const int kg_vt = blockIdx.x %% %d * %d + threadIdx.x;  // the thread's place in its cluster\n", e.cluster, l.Config["THREADS"])
		e.rowTid, e.rowThreads = "kg_vt", strconv.FormatInt(lower.RowThreads(l), 10)
		first, step = fmt.Sprintf("blockIdx.x / %d", e.cluster), fmt.Sprintf("gridDim.x / %d", e.cluster)
	}
	if e.group > 0 {
		e.printf("  const int kg_gt = threadIdx.x %% %d;  // the thread's place in its row's group\n", e.group)
		e.printf("  const int64_t kg_g = threadIdx.x / %d;  // the group's row among the block's\n", e.group)
		e.rowTid, e.rowThreads = "kg_gt", strconv.FormatInt(e.group, 10)
	}
	rows := final.Index[:l.RowDims]
	e.rowIndex = rows
	cached := e.rowCache(l, stmts)
	staged := !cached && e.rowStage(l)
	if staged {
		e.printf("  KG_DYNAMIC_SMEM(kg_smem);\n")
		if e.cluster > 1 {
			// Each block of the cluster stages its piece of the row.
			piece, n := lower.RowStagePiece(e.stageN, e.cluster), e.stageN
			e.printf("  const int kg_lo = (int)(blockIdx.x %% %d) * %d;  // the block's piece of each row: points [kg_lo, kg_hi)\n", e.cluster, piece)
			e.printf("  const int kg_hi = kg_lo + %d < %d ? kg_lo + %d : %d;\n", piece, n, piece, n)
		}
		off := int64(0)
		for _, t := range e.staged {
			ct := e.cType(t.DType)
			if e.cluster > 1 {
				e.printf("  %s* const kg_sb_%s = (%s*)(kg_smem + %d);  // the chunks of the block's piece of the row of %s\n", ct, t.Name, ct, off, t.Name)
				off += lower.StagePieceBytes(t.DType, e.stageN, e.cluster)
				continue
			}
			e.printf("  %s* const %s = (%s*)(kg_smem + %d);  // the row of %s, from its 16-byte chunk\n", ct, e.stage[t], ct, off, t.Name)
			off += lower.StageBytes(t.DType, e.stageN)
		}
	}
	outLoads := map[*ir.Stmt][]*ir.Load{} // each output loop's vector loads
	if cached && e.cacheVec > 1 {
		tensors := slices.Clone(e.cached)
		var aligned []*ir.Load
		for _, s := range lower.RowOutputs(l) {
			tensors = append(tensors, s.Target)
			for _, ld := range vectorLoads([]*ir.Stmt{s}) {
				if e.cache[ld.Tensor] == "" {
					outLoads[s] = append(outLoads[s], ld)
				}
			}
			aligned = append(aligned, outLoads[s]...)
		}
		e.printf("  const bool kg_vec = %s;  // whole aligned chunks: vector loads and stores\n", e.alignedRows(nil, tensors, aligned, e.cacheVec))
	}
	// The grid is sized for prefetching only where lower says so (never
	// with clusters, whose rows start at blockIdx.x / CLUSTER).
	prefetch := cached && lower.Prefetching(l)
	if prefetch {
		// The first row goes to kg_n_*; each step takes it over and
		// loads its successor there while it computes.
		e.declareRows("  ", "kg_n_")
		e.printf("  if ((int64_t)blockIdx.x < kg_rows) {\n")
		e.printf("    const int64_t kg_row = blockIdx.x;\n")
		e.decompose("    ", "kg_row", "kg_rrest", rows)
		e.loadRows("    ", "kg_n_")
		e.printf("  }\n")
	}
	live := "" // with groups: the condition that the group's row exists
	if e.group > 0 {
		// Every group of the block loops as often as the others, so that
		// the shuffles find the whole warp; where the rows run out, a
		// group recomputes the last row and stores nothing.
		r := lower.RowsPerBlock(l)
		e.printf("  for (int64_t kg_rbase = (int64_t)blockIdx.x * %d; kg_rbase < kg_rows; kg_rbase += (int64_t)gridDim.x * %d) {\n", r, r)
		e.printf("    const bool kg_live = kg_rbase + kg_g < kg_rows;\n")
		e.printf("    const int64_t kg_row = kg_live ? kg_rbase + kg_g : kg_rows - 1;\n")
		live = "kg_live"
	} else {
		if e.cluster > 1 {
			// kg_turn counts the cluster's reductions (kg_cluster_reduce).
			e.printf("  int kg_turn = 0;\n")
		}
		e.printf("  for (int64_t kg_row = %s; kg_row < kg_rows; kg_row += %s) {\n", first, step)
	}
	e.decompose("    ", "kg_row", "kg_rrest", rows)
	if prefetch {
		e.declareRows("    ", "kg_c_")
		for _, t := range e.cached {
			e.printf("    #pragma unroll\n")
			e.printf("    for (int kg_j = 0; kg_j < %d; ++kg_j) kg_c_%s[kg_j] = kg_n_%s[kg_j];\n", e.cacheJ, t.Name, t.Name)
		}
		e.printf("    if (kg_row + gridDim.x < kg_rows) {\n")
		e.printf("      const int64_t kg_next = kg_row + gridDim.x;\n")
		e.decompose("      ", "kg_next", "kg_rrest", rows)
		e.loadRows("      ", "kg_n_")
		e.printf("    }\n")
	} else if cached {
		e.declareRows("    ", "kg_c_")
		e.loadRows("    ", "kg_c_")
	}
	if cached {
		e.keepShared(stmts, l.Also, l.RowDims)
	}
	// Streamed rows compute a max and its sum of shifted exponentials, or
	// a sum and its squared deviations, in one pass where that leaves one
	// pass (lower.OnePass); rows kept in registers read them once a pass
	// anyway; staged rows take the first statement's reductions, and
	// their pairs, as they are copied in (stageAccs).
	var pairs lower.Passes
	switch {
	case staged:
		var accs []stageAcc
		accs, pairs.Centered = e.stageAccs(stmts, l.RowDims)
		e.stageRows("    ", accs)
		e.keepStagedShare(stmts, l.Also, l.RowDims)
	case !cached:
		pairs, _ = lower.OnePass(stmts, l.RowDims)
	}
	for _, s := range stmts[:len(stmts)-1] {
		for _, p := range pairs.Online {
			if p.Shift == s.Target {
				e.onlinePass("    ", p)
			}
		}
		for _, p := range pairs.Centered {
			if _, done := e.reduced[p.Sum]; p.Mean == s.Target && !done {
				e.centeredPass("    ", p)
			}
		}
		reg := "kg_v_" + s.Target.Name
		e.printf("    %s %s;\n", e.cType(s.Target.DType), reg)
		e.printf("    {  // let %s\n", s.Target.Name)
		e.blockReductions("      ", s.Value)
		e.printf("      %s = %s;\n", reg, e.expr(s.Value))
		e.printf("    }\n")
		e.regs[s.Target] = reg
		for _, p := range pairs.Centered {
			if p.Mean == s.Target {
				e.centeredSquares("    ", p, reg)
			}
		}
		if s.Target.Kind == ir.Output || e.plan.Slot(s.Target) != nil {
			// A fused output, or a let that later launches read: the
			// row's first thread stores it too.
			first := e.rowTid + " == 0"
			if live != "" {
				first += " && " + live
			}
			e.printf("    if (%s) %s[%s] = %s;\n", first, name(s.Target.Name), e.linear(lower.Refs(rows), s.Target.Shape), reg)
		}
	}
	e.hoistRowValues("    ", append(append([]*ir.Stmt(nil), l.Also...), final), l.RowDims)
	// The statements stored along the row beside the final one, each in
	// a pass of its own (no shuffles: a group whose row is past the end
	// skips them).
	if len(l.Also) > 0 {
		ind := "    "
		if live != "" {
			e.printf("    if (%s) {\n", live)
			ind = "      "
		}
		for _, s := range l.Also {
			e.printf("%s{  // %s along the row\n", ind, s.Target.Name)
			e.shareUse = e.shareUses[s]
			e.rowOutput(ind+"  ", l, s, outLoads[s], cached, staged)
			e.printf("%s}\n", ind)
		}
		e.shareUse = nil
		if live != "" {
			e.printf("    }\n")
		}
	}
	// The row's outputs: no shuffles from here on but the single result's
	// reductions, so a group whose row is past the end may skip them.
	ind := "    "
	if live != "" && len(final.Index) > l.RowDims {
		e.printf("    if (%s) {\n", live)
		ind = "      "
	}
	e.shareUse = e.shareUses[final]
	if len(final.Index) > l.RowDims {
		e.rowOutput(ind, l, final, outLoads[final], cached, staged)
	} else {
		e.blockReductions("    ", final.Value)
		first := e.rowTid + " == 0"
		if live != "" {
			first += " && " + live
		}
		e.printf("    if (%s) {\n", first)
		e.store("      ", final)
		e.printf("    }\n")
	}
	e.shareUse = nil
	if ind != "    " {
		e.printf("    }\n")
	}
	if staged {
		e.printf("    __syncthreads();  // every thread is done with the staged row before the next replaces it\n")
	}
	e.printf("  }\n")
	if e.cluster > 1 {
		e.printf("  kg_cluster_sync();  // no block leaves while another may still read its results\n")
	}
	e.regs, e.reduced, e.cache, e.cached, e.rowValues = nil, nil, nil, nil, nil
	e.shares, e.shareUses = nil, nil
	e.stage, e.staged = nil, nil
	e.cluster, e.group, e.rowTid, e.rowThreads = 0, 0, "", ""
}

// rowOutput stores the row's elements of s, the final statement or one
// stored beside it (lower.RowOutputs): a chunk at a time from registers
// (storeChunks, with loads the pass's own vector loads), from shared
// memory (stageStore), or a pass over the row (rowPass).
func (e *emitter) rowOutput(ind string, l *lower.Launch, s *ir.Stmt, loads []*ir.Load, cached, staged bool) {
	switch {
	case cached && e.cacheVec > 1:
		e.storeChunks(ind, s, loads)
	case staged:
		e.stageStore(ind, s)
	default:
		e.printf("%sconst int64_t kg_cols = %s;\n", ind, e.expr(lower.Cols(l, s)))
		cols := s.Index[l.RowDims:]
		e.rowPass(ind, "kg_q", "kg_cols", cols, s.Value, s, func(in string) {
			e.decompose(in, "kg_q", "kg_crest", cols)
			e.store(in, s)
		})
	}
}

// rowCache decides whether the launch keeps rows of its inputs in
// registers (lower.RowCache), and if so which (lower.RowInputs: inputs,
// and an earlier launch's results that two passes read): each read as
// X[row..., i] by one of the row's loops is loaded once a row, element i =
// threadIdx.x + j * THREADS into kg_c_X[j], and every pass reads the
// registers: a softmax or layernorm reads its row from memory once, with
// all of a thread's loads in flight together.
func (e *emitter) rowCache(l *lower.Launch, stmts []*ir.Stmt) bool {
	n, loops, ok := lower.RowCache(l)
	if !ok {
		return false
	}
	threads := lower.RowThreads(l)
	e.cache = map[*ir.Tensor]string{}
	e.cached = nil
	e.rowIndex = l.Stmt.Index[:l.RowDims]
	e.cacheN, e.cacheJ, e.cacheThreads, e.cacheVec = n, lower.RowRegs(l, n), threads, lower.RowVec(l)
	for _, t := range lower.RowInputs(l, loops) {
		e.cache[t] = "kg_c_" + t.Name
		e.cached = append(e.cached, t)
	}
	return len(e.cached) > 0
}

// rowStage decides whether the launch stages its rows in shared memory
// (lower.RowStage), and if so which: each input read as X[row..., i] by
// one of the row's loops is copied into kg_s_X once a row (stageRows),
// and the loops' loads of it read kg_s_X[i + kg_sh_X] (see expr).
func (e *emitter) rowStage(l *lower.Launch) bool {
	n, loops, ok := lower.RowStage(l)
	if !ok {
		return false
	}
	e.staged = lower.RowInputs(l, loops)
	e.stage = map[*ir.Tensor]string{}
	for _, t := range e.staged {
		e.stage[t] = "kg_s_" + t.Name
	}
	e.stageN, e.stageThreads, e.rowIndex = n, l.Config["THREADS"], l.Stmt.Index[:l.RowDims]
	return len(e.staged) > 0
}

// stageBatch is the 16-byte chunks a thread loads before it stores them
// to shared memory, so that many loads are in flight at once.
const stageBatch = 8

// stageRows copies the current row (the row variables in scope) of every
// staged input into shared memory: kg_sh_X is the row's first element's
// place in its 16-byte chunk, and chunk c of the row's chunks (from that
// one) moves with one aligned vector load and store, but for the first
// and last, partly outside the row (or the block's piece of it), whose
// elements move one at a time.
// Element i of the row is then kg_s_X[i + kg_sh_X]. A barrier follows:
// the passes over the row read what other threads copied. The copy of
// the one staged input takes the points of accs (stageAccs) from its
// registers, the chunks of each batch after they are all loaded. In a
// cluster (CLUSTER > 1) each block copies the chunks that hold its piece
// of the row, points [kg_lo, kg_hi), the first at kg_sb_X, and kg_s_X
// points where element 0's chunk would be, so that element i of the
// piece is kg_s_X[i + kg_sh_X] still; the accs take the piece's points.
// The indices are 32-bit (a staged row is at most a cluster's shared
// memory) and a thread's chunks THREADS apart, a constant, so that a
// batch's loads are at fixed offsets from one address: center_2m staged
// by clusters of 16 blocks of 1024 threads took 410.91 -> 343.52 us
// with them on the H100 (testsuite/results/2026-12-06-h100-s35-final/).
func (e *emitter) stageRows(indent string, accs []stageAcc) {
	idx := lower.Refs(e.rowIndex)
	idx = append(idx, ir.IntConst(0))
	n, b := e.stageN, int64(stageBatch)
	lo, hi := "0", strconv.FormatInt(n, 10) // the points the block takes
	if e.cluster > 1 {
		lo, hi = "kg_lo", "kg_hi"
	}
	for _, a := range accs {
		a.declare(indent)
		a.open(indent)
	}
	for _, t := range e.staged {
		ct, v := e.cType(t.DType), lower.StageChunk(t.DType)
		rp, sh, sp := "kg_rp_"+t.Name, "kg_sh_"+t.Name, e.stage[t]
		e.printf("%sconst %s* const %s = %s + %s;\n", indent, ct, rp, name(t.Name), e.linear(idx, t.Shape))
		e.printf("%sconst int %s = (int)((uintptr_t)%s %% 16 / sizeof(%s));\n", indent, sh, rp, ct)
		if e.cluster > 1 {
			clo := "kg_clo_" + t.Name
			e.printf("%sconst int %s = (kg_lo + %s) / %d;  // the chunk of the piece's first point\n", indent, clo, sh, v)
			e.printf("%s%s* const %s = kg_sb_%s - %s * %d;\n", indent, ct, sp, t.Name, clo, v)
		}
		e.printf("%s{\n", indent)
		in := indent + "  "
		T := e.stageThreads
		e.printf("%sconst %s* const kg_ap = %s - %s;  // 16-byte aligned\n", in, ct, rp, sh)
		e.printf("%sconst int kg_chunks = (%s + %s + %d) / %d;  // past the chunk of the last point\n", in, hi, sh, v-1, v)
		e.printf("%sconst int kg_w0 = (%s + %s + %d) / %d, kg_w1 = (%s + %s) / %d;  // the chunks wholly in [%s, %s): [kg_w0, kg_w1)\n", in, lo, sh, v-1, v, hi, sh, v, lo, hi)
		e.printf("%sfor (int kg_c0 = (%s + %s) / %d + (int)threadIdx.x; kg_c0 < kg_chunks; kg_c0 += %d) {\n", in, lo, sh, v, b*T)
		e.printf("%s  KgVec<%s, %d> kg_x[%d];\n", in, ct, v, b)
		// A batch whose chunks all lie wholly in [lo, hi) (every batch but
		// those at the piece's edges) loads and takes them with no test a
		// chunk: the loads leave together, at fixed offsets from one
		// address.
		e.printf("%s  if (kg_c0 >= kg_w0 && kg_c0 + %d < kg_w1) {  // the whole batch\n", in, (b-1)*T)
		e.printf("%s    #pragma unroll\n", in)
		e.printf("%s    for (int kg_b = 0; kg_b < %d; ++kg_b) kg_x[kg_b] = *(const KgVec<%s, %d>*)(kg_ap + (kg_c0 + kg_b * %d) * %d);\n", in, b, ct, v, T, v)
		e.printf("%s    #pragma unroll\n", in)
		e.printf("%s    for (int kg_b = 0; kg_b < %d; ++kg_b) {\n", in, b)
		e.printf("%s      const int kg_c = kg_c0 + kg_b * %d;\n", in, T)
		e.printf("%s      *(KgVec<%s, %d>*)(%s + kg_c * %d) = kg_x[kg_b];\n", in, ct, v, sp, v)
		if len(accs) > 0 {
			e.printf("%s      const int kg_p0 = kg_c * %d - %s;  // the chunk's first point\n", in, v, sh)
			e.stagePoints(in+"      ", t, v, "", accs)
		}
		e.printf("%s    }\n", in)
		e.printf("%s    continue;\n", in)
		e.printf("%s  }\n", in)
		e.printf("%s  #pragma unroll\n", in)
		e.printf("%s  for (int kg_b = 0; kg_b < %d; ++kg_b) {\n", in, b)
		e.printf("%s    const int kg_c = kg_c0 + kg_b * %d;\n", in, T)
		e.printf("%s    if (kg_c >= kg_w0 && kg_c < kg_w1) {\n", in)
		e.printf("%s      kg_x[kg_b] = *(const KgVec<%s, %d>*)(kg_ap + kg_c * %d);\n", in, ct, v, v)
		e.printf("%s    } else if (kg_c < kg_chunks) {  // the first or last, partly in [%s, %s)\n", in, lo, hi)
		e.printf("%s      #pragma unroll\n", in)
		e.printf("%s      for (int kg_e = 0; kg_e < %d; ++kg_e) {\n", in, v)
		e.printf("%s        const int kg_p = kg_c * %d - %s + kg_e;\n", in, v, sh)
		e.printf("%s        kg_x[kg_b].v[kg_e] = kg_p >= %s && kg_p < %s ? %s[kg_p] : kg_zero<%s>();\n", in, lo, hi, rp, ct)
		e.printf("%s      }\n", in)
		e.printf("%s    }\n", in)
		e.printf("%s  }\n", in)
		e.printf("%s  #pragma unroll\n", in)
		e.printf("%s  for (int kg_b = 0; kg_b < %d; ++kg_b) {\n", in, b)
		e.printf("%s    const int kg_c = kg_c0 + kg_b * %d;\n", in, T)
		if len(accs) == 0 {
			e.printf("%s    if (kg_c < kg_chunks) *(KgVec<%s, %d>*)(%s + kg_c * %d) = kg_x[kg_b];\n", in, ct, v, sp, v)
		} else {
			e.printf("%s    if (kg_c < kg_chunks) {\n", in)
			e.printf("%s      *(KgVec<%s, %d>*)(%s + kg_c * %d) = kg_x[kg_b];\n", in, ct, v, sp, v)
			e.printf("%s      const int kg_p0 = kg_c * %d - %s;  // the chunk's first point\n", in, v, sh)
			e.printf("%s      if (kg_c >= kg_w0 && kg_c < kg_w1) {\n", in)
			e.stagePoints(in+"        ", t, v, "", accs)
			e.printf("%s      } else {\n", in)
			e.stagePoints(in+"        ", t, v, fmt.Sprintf("if (kg_p0 + kg_e >= %s && kg_p0 + kg_e < %s) ", lo, hi), accs)
			e.printf("%s      }\n", in)
			e.printf("%s    }\n", in)
		}
		e.printf("%s  }\n", in)
		e.printf("%s}\n", in)
		e.printf("%s}\n", indent)
	}
	e.printf("%s__syncthreads();\n", indent)
	for _, a := range accs {
		a.close(indent)
	}
}

// A stageAcc is a rowAcc that stageRows computes, over the points of
// reduction r.
type stageAcc struct {
	rowAcc
	r *ir.Reduce
}

// stagePoints takes the points of a chunk kg_x[kg_b] of staged input t
// (v elements, from point kg_p0) for each of accs, each point under
// condition cond ("if (...) " or empty).
func (e *emitter) stagePoints(indent string, t *ir.Tensor, v int64, cond string, accs []stageAcc) {
	e.stageVec = map[*ir.Tensor]string{t: "kg_x[kg_b]"}
	e.printf("%s#pragma unroll\n", indent)
	e.printf("%sfor (int kg_e = 0; kg_e < %d; ++kg_e) %s{\n", indent, v, cond)
	for _, a := range accs {
		ax := a.r.Axes[0]
		e.loop = ax
		e.printf("%s  {\n", indent)
		e.printf("%s    const int64_t %s = kg_p0 + kg_e;\n", indent, name(ax.Name))
		a.point(indent + "    ")
		e.printf("%s  }\n", indent)
	}
	e.printf("%s}\n", indent)
	e.loop, e.stageVec = nil, nil
}

// stageAccs lists what the copy of a staged row into shared memory
// computes as it goes (stageRows): the reductions of the launch's first
// statement (stmts, its fused statements then its own), where each is
// over the row's points and reads only the one staged input, the row's
// indices and what is in memory before the launch; and where that
// statement is a sum that later squared deviations are taken from, or a
// max that a later sum of exponentials is shifted by where no other pass
// is left (lower.OnePass), the pair in one (centeredAcc, onlineAcc); it
// returns the centered pairs too. A thread then takes its chunks' points
// while the block's later loads are in flight, and the launch makes one
// or two passes over shared memory fewer. (A softmax's sum waits for its
// max: its pass keeps each exponential for the outputs' in place of the
// row, keepStagedShare, which costs less than computing them twice. On
// the H200, softmax over 128 rows of 50257 f32 took 29.95 -> 31.17 us
// with its max and sum online in the copy, and 29.47 -> 27.78 with the
// max in the copy and the exponentials kept:
// testsuite/results/2026-12-06-h200-s33-online-copy/ and -staged/.)
func (e *emitter) stageAccs(stmts []*ir.Stmt, rowDims int) ([]stageAcc, []lower.CenteredSum) {
	if len(e.staged) != 1 || len(stmts) < 2 {
		return nil, nil
	}
	rs := ir.TopReductions(stmts[0].Value)
	for _, r := range rs {
		if !e.overStagedRow(r, stmts) {
			return nil, nil
		}
	}
	pairs, _ := lower.OnePass(stmts, rowDims)
	var accs []stageAcc
	var centered []lower.CenteredSum
	for i, r := range rs {
		a := stageAcc{r: r}
		if j := slices.IndexFunc(pairs.Online, func(p lower.OnlineSum) bool { return p.Max == r }); j >= 0 {
			a.rowAcc = e.onlineAcc(pairs.Online[j], fmt.Sprintf("kg_om%d", i), fmt.Sprintf("kg_os%d", i))
		} else if j := slices.IndexFunc(pairs.Centered, func(p lower.CenteredSum) bool { return p.Sum == r }); j >= 0 {
			a.rowAcc = e.centeredAcc(pairs.Centered[j], fmt.Sprintf("kg_sp%d", i))
			centered = append(centered, pairs.Centered[j])
		} else {
			a.rowAcc = e.plainAcc(r, fmt.Sprintf("kg_sp%d", i))
		}
		accs = append(accs, a)
	}
	return accs, centered
}

// overStagedRow reports whether reduction r, over the staged rows'
// points (as every loop of a staged launch is: one index from 0 to their
// length, lower.RowStage), reads no tensor that the launch's statements
// stmts write, nor holds a reduction of its own.
func (e *emitter) overStagedRow(r *ir.Reduce, stmts []*ir.Stmt) bool {
	return !ir.Any(r.Body, func(x ir.Expr) bool {
		if _, nested := x.(*ir.Reduce); nested {
			return true
		}
		ld, ok := x.(*ir.Load)
		return ok && slices.ContainsFunc(stmts, func(s *ir.Stmt) bool { return s.Target == ld.Tensor })
	})
}

// declareRows declares a register array per cached input, named prefix +
// the input's name.
func (e *emitter) declareRows(indent, prefix string) {
	for _, t := range e.cached {
		e.printf("%s%s %s%s[%d];\n", indent, e.cType(t.DType), prefix, t.Name, e.cacheJ)
	}
}

// loadRows loads the current row (the row variables in scope) of every
// cached input into its array named prefix + the input's name.
func (e *emitter) loadRows(indent, prefix string) {
	idx := lower.Refs(e.rowIndex)
	idx = append(idx, ir.IntConst(0))
	for _, t := range e.cached {
		ct := e.cType(t.DType)
		e.printf("%s{\n", indent)
		e.printf("%s  const %s* kg_rp = %s + %s;\n", indent, ct, name(t.Name), e.linear(idx, t.Shape))
		if v := e.cacheVec; v > 1 {
			// Chunk c of v elements: one vector load where aligned.
			reg := prefix + t.Name
			e.printf("%s  #pragma unroll\n", indent)
			e.printf("%s  for (int kg_c = 0; kg_c < %d; ++kg_c) {\n", indent, e.cacheJ/v)
			e.printf("%s    const int64_t kg_i = ((int64_t)kg_c * %d + %s) * %d;\n", indent, e.cacheThreads, e.rowTid, v)
			e.printf("%s    if (kg_i >= %dL) {\n", indent, e.cacheN)
			e.printf("%s      #pragma unroll\n", indent)
			e.printf("%s      for (int kg_e = 0; kg_e < %d; ++kg_e) %s[kg_c * %d + kg_e] = kg_zero<%s>();\n", indent, v, reg, v, ct)
			e.printf("%s    } else if (kg_vec) {\n", indent)
			e.printf("%s      const KgVec<%s, %d> kg_x = *(const KgVec<%s, %d>*)(kg_rp + kg_i);\n", indent, ct, v, ct, v)
			e.printf("%s      #pragma unroll\n", indent)
			e.printf("%s      for (int kg_e = 0; kg_e < %d; ++kg_e) %s[kg_c * %d + kg_e] = kg_x.v[kg_e];\n", indent, v, reg, v)
			e.printf("%s    } else {\n", indent)
			e.printf("%s      #pragma unroll\n", indent)
			e.printf("%s      for (int kg_e = 0; kg_e < %d; ++kg_e) %s[kg_c * %d + kg_e] = kg_rp[kg_i + kg_e];\n", indent, v, reg, v)
			e.printf("%s    }\n", indent)
			e.printf("%s  }\n", indent)
			e.printf("%s}\n", indent)
			continue
		}
		e.printf("%s  #pragma unroll\n", indent)
		e.printf("%s  for (int kg_j = 0; kg_j < %d; ++kg_j) {\n", indent, e.cacheJ)
		e.printf("%s    const int64_t kg_i = %s + (int64_t)kg_j * %d;\n", indent, e.rowTid, e.cacheThreads)
		e.printf("%s    %s%s[kg_j] = kg_i < %dL ? kg_rp[kg_i] : kg_zero<%s>();\n", indent, prefix, t.Name, e.cacheN, ct)
		e.printf("%s  }\n", indent)
		e.printf("%s}\n", indent)
	}
}

// stageStore writes the row's output elements where the launch stages
// its rows: in 16-byte chunks of the output's row from the chunk that
// holds its first element (kg_shy elements in), each computed element by
// element (the staged rows' loads read shared memory) and stored with one
// aligned vector store, but for the first and last chunks, partly outside
// the row, computed and stored element by element where in it (the
// others test no element). Where every staged input of the
// output's element size that the statement reads starts its row as far
// into its chunk as the output (checked for each row; so it is when the
// rows have the same length and the tensors are aligned), a chunk's
// staged values are read with one vector load from shared memory: read
// element by element, a warp's loads of a chunk's element e fall 16 bytes
// apart, four threads to a bank for 4-byte elements. So are the
// statement's weights along the row (stageWeights) from memory, where
// their rows start as far into a chunk as the output's. In a cluster
// (CLUSTER > 1) each block stores the points of its piece of the row,
// [kg_lo, kg_hi).
func (e *emitter) stageStore(indent string, s *ir.Stmt) {
	col := s.Index[len(s.Index)-1]
	t, v, n := e.cType(s.Target.DType), lower.StageChunk(s.Target.DType), e.stageN
	idx := lower.Refs(s.Index[:len(s.Index)-1])
	idx = append(idx, ir.IntConst(0))
	e.printf("%s{\n", indent)
	in := indent + "  "
	e.printf("%s%s* const kg_yp = %s + %s;\n", in, t, name(s.Target.Name), e.linear(idx, s.Target.Shape))
	e.printf("%sconst int kg_shy = (int)((uintptr_t)kg_yp %% 16 / sizeof(%s));\n", in, t)
	weights := e.stageWeights(s)
	for i, ld := range weights {
		ct := e.cType(ld.Tensor.DType)
		e.printf("%sconst %s* const kg_wp%d = %s;  // the row of %s\n", in, ct, i, e.loadAt(ld, map[*ir.Index]ir.Expr{col: ir.IntConst(0)}), ld.Tensor.Name)
	}
	// The points the block stores: the row, or in a cluster its piece.
	lo, hi, first := "0", strconv.FormatInt(n, 10)+"L", "threadIdx.x"
	if e.cluster > 1 {
		lo, hi = "kg_lo", "kg_hi"
		first = fmt.Sprintf("(kg_lo + kg_shy) / %d + threadIdx.x", v)
		e.printf("%sconst int64_t kg_ychunks = (kg_hi + kg_shy + %d) / %d;  // past the chunk of the piece's last point\n", in, v-1, v)
	} else {
		e.printf("%sconst int64_t kg_ychunks = (%dL + kg_shy + %d) / %d;\n", in, n, v-1, v)
	}
	e.printf("%s#pragma unroll 2\n", in)
	e.printf("%sfor (int64_t kg_c = %s; kg_c < kg_ychunks; kg_c += blockDim.x) {\n", in, first)
	e.printf("%s  const int64_t kg_i0 = kg_c * %d - kg_shy;\n", in, v)
	e.printf("%s  KgVec<%s, %d> kg_vy;\n", in, t, v)
	elements := func(in, check string) {
		e.printf("%s#pragma unroll\n", in)
		e.printf("%sfor (int kg_e = 0; kg_e < %d; ++kg_e) {\n", in, v)
		e.printf("%s  const int64_t %s = kg_i0 + kg_e;\n", in, name(col.Name))
		e.loop = col
		e.printf("%s  %skg_vy.v[kg_e] = %s;\n", in, check, e.expr(s.Value))
		e.loop = nil
		e.printf("%s}\n", in)
	}
	var lined []*ir.Tensor // staged inputs the statement reads, of the output's element size
	for _, x := range e.staged {
		reads := ir.Any(s.Value, func(y ir.Expr) bool { ld, ok := y.(*ir.Load); return ok && ld.Tensor == x })
		if reads && x.DType.Size() == s.Target.DType.Size() {
			lined = append(lined, x)
		}
	}
	e.printf("%s  if (kg_i0 >= %s && kg_i0 + %d <= %s) {  // the whole chunk in the row\n", in, lo, v, hi)
	if len(lined) == 0 && len(weights) == 0 {
		elements(in+"    ", "")
	} else {
		var same []string
		for _, x := range lined {
			same = append(same, fmt.Sprintf("kg_sh_%s == kg_shy", x.Name))
		}
		for i := range weights {
			same = append(same, fmt.Sprintf("(uintptr_t)(kg_wp%d - kg_shy) %% 16 == 0", i))
		}
		e.printf("%s    if (%s) {  // the staged chunks line up with the output's\n", in, strings.Join(same, " && "))
		e.stageVec = map[*ir.Tensor]string{}
		for _, x := range lined {
			ct := e.cType(x.DType)
			e.stageVec[x] = "kg_sv_" + x.Name
			e.printf("%s      const KgVec<%s, %d> kg_sv_%s = *(const KgVec<%s, %d>*)(%s + kg_c * %d);\n", in, ct, v, x.Name, ct, v, e.stage[x], v)
		}
		if e.loads == nil {
			e.loads = map[*ir.Load]string{}
		}
		for i, ld := range weights {
			ct := e.cType(ld.Tensor.DType)
			e.printf("%s      const KgVec<%s, %d> kg_wv%d = *(const KgVec<%s, %d>*)(kg_wp%d - kg_shy + kg_c * %d);\n", in, ct, v, i, ct, v, i, v)
			e.aliasLoads(s.Value, ld, fmt.Sprintf("kg_wv%d.v[kg_e]", i))
		}
		elements(in+"      ", "")
		for _, ld := range weights {
			e.aliasLoads(s.Value, ld, "")
		}
		e.stageVec = nil
		e.printf("%s    } else {\n", in)
		elements(in+"      ", "")
		e.printf("%s    }\n", in)
	}
	e.printf("%s    %s = kg_vy;\n", in, vecIndex(t, v, "(kg_yp - kg_shy)", "kg_c"))
	e.printf("%s  } else {  // the first or last, partly outside it\n", in)
	elements(in+"    ", fmt.Sprintf("if (%s >= %s && %s < %s) ", name(col.Name), lo, name(col.Name), hi))
	e.printf("%s    #pragma unroll\n", in)
	e.printf("%s    for (int kg_e = 0; kg_e < %d; ++kg_e) if (kg_i0 + kg_e >= %s && kg_i0 + kg_e < %s) kg_yp[kg_i0 + kg_e] = kg_vy.v[kg_e];\n", in, v, lo, hi)
	e.printf("%s  }\n", in)
	e.printf("%s}\n", in)
	e.printf("%s}\n", indent)
}

// stageWeights lists the loads of s, a statement stored along a staged
// row (stageStore), that its whole chunks read with one vector load each
// beside the staged rows' (a layer norm's weights and bias): those read
// along the row (alongRow) of the output's element size. Read element by
// element, a warp's loads of a chunk's element e fall 16 bytes apart.
func (e *emitter) stageWeights(s *ir.Stmt) []*ir.Load {
	col := s.Index[len(s.Index)-1]
	loads := e.alongRow(s.Value, []*ir.Index{col})
	return slices.DeleteFunc(loads, func(ld *ir.Load) bool { return ld.Tensor.DType.Size() != s.Target.DType.Size() })
}

// rowPass emits a loop of the row's threads over the n points of a row
// (flat, the indices ix), its body written by emit at the indentation it
// is given. Where the row is neither cached nor staged and it reads
// inputs along the row (rowVectorLoads), a second loop comes first, for
// rows whose points are whole chunks of 16 bytes starting aligned
// (checked for each row): each thread loads chunks of those inputs with
// one vector load each, UNROLL 4, and runs the body on the chunk's
// points. A long row that no block keeps (layer norm statistics over
// millions of elements, or any row of a size known only at run time) then
// has four times the bytes in flight: on the H100
// (testsuite/results/2026-11-26-h100-s12-rows/vector-rows/), hip:nvidia's
// layernorm_3d_kb 606 -> 543 us and matvec_256x131072 76.7 -> 58.8;
// cuda:sm_90's the same within the noise (548.5 -> 543.9, 65.47 -> 65.44).
//
// A pass that stores out, a statement whose target is contiguous along
// the row too, stores each chunk's points with one vector store of up to
// 16 bytes where the row of the target starts aligned as well
// (rowVectorStore); emit then writes only the points of the other loop.
func (e *emitter) rowPass(indent, flat, n string, ix []*ir.Index, reads ir.Expr, out *ir.Stmt, emit func(in string)) {
	if loads := e.chunkLoads(ix, reads); len(loads) > 0 {
		e.cachedChunks(indent, flat, ix, reads, loads, emit)
		return
	}
	loads, v := e.rowVectorLoads(ix, reads)
	if v < 2 {
		in := e.rowLoop(indent, flat, n, ix)
		emit(in)
		e.closeRowLoop(indent)
		return
	}
	e.printf("%s{\n", indent)
	in := indent + "  "
	conds := []string{fmt.Sprintf("%s %% %d == 0", n, v)}
	first := rowFirst(ix)
	conds = append(conds, e.rowPointers(in, loads, first, v)...)
	vecOut := e.rowVectorStore(out, ix, v)
	var ot string // the output's element type, where stored as vectors
	if vecOut {
		ot = e.cType(out.Target.DType)
		target := &ir.Load{Tensor: out.Target, Index: lower.Refs(out.Index)}
		e.printf("%s%s* const kg_yvp = %s;  // the row of %s\n", in, ot, e.loadAt(target, first), out.Target.Name)
		conds = append(conds, fmt.Sprintf("(uintptr_t)kg_yvp %% %d == 0", v*int64(out.Target.DType.Size())))
	}
	e.printf("%sif (%s) {\n", in, strings.Join(conds, " && "))
	e.printf("%s  #pragma unroll 4\n", in)
	e.printf("%s  for (int64_t kg_vc = %s; kg_vc < %s / %d; kg_vc += %s) {\n", in, e.rowTid, n, v, e.rowThreads)
	if e.loads == nil {
		e.loads = map[*ir.Load]string{}
	}
	var aliased []*ir.Load
	for i, ld := range loads {
		ct := e.cType(ld.Tensor.DType)
		e.printf("%s    const KgVec<%s, %d> kg_vl%d = *(const KgVec<%s, %d>*)(kg_vp%d + kg_vc * %d);\n", in, ct, v, i, ct, v, i, v)
		ir.Walk(reads, func(x ir.Expr) bool {
			if other, ok := x.(*ir.Load); ok && sameLoad(other, ld) {
				e.loads[other] = fmt.Sprintf("kg_vl%d.v[kg_e]", i)
				aliased = append(aliased, other)
			}
			return true
		})
	}
	if vecOut {
		e.printf("%s    KgVec<%s, %d> kg_vy;\n", in, ot, v)
	}
	e.printf("%s    #pragma unroll\n", in)
	e.printf("%s    for (int kg_e = 0; kg_e < %d; ++kg_e) {\n", in, v)
	e.printf("%s      const int64_t %s = kg_vc * %d + kg_e;\n", in, flat, v)
	if vecOut {
		e.decompose(in+"      ", flat, "kg_crest", ix)
		e.printf("%s      kg_vy.v[kg_e] = %s;\n", in, e.expr(out.Value))
	} else {
		emit(in + "      ")
	}
	for _, ld := range aliased {
		delete(e.loads, ld)
	}
	e.printf("%s    }\n", in)
	if vecOut {
		e.printf("%s    %s = kg_vy;\n", in, vecIndex(ot, v, "kg_yvp", "kg_vc"))
	}
	e.printf("%s  }\n", in)
	e.printf("%s} else {\n", in)
	body := e.rowLoop(in+"  ", flat, n, ix)
	emit(body)
	e.closeRowLoop(in + "  ")
	e.printf("%s}\n", in)
	e.printf("%s}\n", indent)
}

// rowVectorStore reports whether a row pass over ix that reads chunks of
// v points stores out's points a chunk at a time: out's target is
// contiguous along ix, read at the row's indices otherwise, and a chunk of
// it is at most 16 bytes.
func (e *emitter) rowVectorStore(out *ir.Stmt, ix []*ir.Index, v int64) bool {
	if out == nil || v*int64(out.Target.DType.Size()) > 16 {
		return false
	}
	target := &ir.Load{Tensor: out.Target, Index: lower.Refs(out.Index)}
	return lower.Contiguous(target, ix) && !slices.ContainsFunc(target.Index, func(i ir.Expr) bool { return !e.onlyRowAnd(i, ix...) })
}

// chunkLoads lists the loads of reads, a pass over a row kept in
// registers in chunks of VEC (lower.RowVec > 1), that the pass reads a
// chunk at a time (alongRow): the vector x of a matrix-vector product's
// sum[k](A[m, k] * x[k]) beside the cached rows of A, or a split row's
// X[chunk * CH + d] where nothing is cached. They would otherwise be read
// an element at a time, VEC loads where one does, and nvcc merges none
// of them (it cannot know the rows aligned): frobenius_kb's split sum
// read its 64 MiB as 32 scalar loads a thread.
func (e *emitter) chunkLoads(ix []*ir.Index, reads ir.Expr) []*ir.Load {
	if e.cache == nil || e.cacheVec < 2 || len(ix) != 1 {
		return nil
	}
	return e.alongRow(reads, ix)
}

// alongRow lists the loads of reads, each element once, that a pass over
// the points ix of a row reads a chunk at a time: inputs that the launch
// neither keeps in registers nor stages, read whenever reads is evaluated
// (not under ?:, && or ||, nor with a default) at consecutive elements
// for consecutive points (lower.Contiguous: X[r, d], X[chunk * CH + d], or
// a group's X[n, g * CG + j, h, w] over [j, h, w]), their indices of the
// row's and ix only, and no index that reads memory. Whether a row of
// them starts aligned is checked for each row (rowPointers).
func (e *emitter) alongRow(reads ir.Expr, ix []*ir.Index) []*ir.Load {
	var out []*ir.Load
	for _, ld := range evaluatedLoads(reads) {
		if ld.Default != nil || ld.Tensor.Kind != ir.Input || e.cache[ld.Tensor] != "" || e.stage[ld.Tensor] != "" ||
			lower.Gathers(ld) || len(ld.Index) == 0 || slices.ContainsFunc(out, func(o *ir.Load) bool { return sameLoad(o, ld) }) {
			continue
		}
		if !lower.Contiguous(ld, ix) || slices.ContainsFunc(ld.Index, func(i ir.Expr) bool { return !e.onlyRowAnd(i, ix...) }) {
			continue
		}
		out = append(out, ld)
	}
	return out
}

// rowFirst is the first point of a pass over ix: every index at its
// lower bound.
func rowFirst(ix []*ir.Index) map[*ir.Index]ir.Expr {
	first := map[*ir.Index]ir.Expr{}
	for _, x := range ix {
		first[x] = x.Lo
	}
	return first
}

// loadAt is the address of ld's element with the indices of at (others as
// in scope): X + its offset.
func (e *emitter) loadAt(ld *ir.Load, at map[*ir.Index]ir.Expr) string {
	var idx []ir.Expr
	for _, x := range ld.Index {
		idx = append(idx, lower.Simplify(ir.Substitute(x, at)))
	}
	return fmt.Sprintf("%s + %s", name(ld.Tensor.Name), e.linear(idx, ld.Tensor.Shape))
}

// rowPointers declares kg_vp<i>, the address of load i's element at a
// pass's first point, and returns the conditions that each is aligned
// for chunks of v elements: where they hold, the pass's chunk that starts
// at point q (a multiple of v) of load i is kg_vp<i>[q, q + v), one
// vector load.
func (e *emitter) rowPointers(in string, loads []*ir.Load, first map[*ir.Index]ir.Expr, v int64) []string {
	var conds []string
	for i, ld := range loads {
		ct := e.cType(ld.Tensor.DType)
		e.printf("%sconst %s* const kg_vp%d = %s;  // the row of %s\n", in, ct, i, e.loadAt(ld, first), ld.Tensor.Name)
		conds = append(conds, fmt.Sprintf("(uintptr_t)kg_vp%d %% %d == 0", i, v*int64(ld.Tensor.DType.Size())))
	}
	return conds
}

// cachedChunks is rowPass over a row kept in registers in chunks (see
// chunkLoads): the unrolled loop over the thread's chunks, each of the
// loads' chunks read with one vector load where the rows of the loads
// start aligned (kg_pvec, checked for each row), then the chunk's points
// in order, as rowLoop's registers are.
func (e *emitter) cachedChunks(indent, flat string, ix []*ir.Index, reads ir.Expr, loads []*ir.Load, emit func(in string)) {
	v := e.cacheVec
	e.printf("%s{\n", indent)
	outer := indent + "  "
	conds := e.rowPointers(outer, loads, rowFirst(ix), v)
	e.printf("%sconst bool kg_pvec = %s;\n", outer, strings.Join(conds, " && "))
	e.loop = ix[0]
	e.printf("%s#pragma unroll\n", outer)
	e.printf("%sfor (int kg_c = 0; kg_c < %d; ++kg_c) {\n", outer, e.cacheJ/v)
	e.printf("%s  const int64_t kg_q0 = ((int64_t)kg_c * %d + %s) * %d;\n", outer, e.cacheThreads, e.rowTid, v)
	e.printf("%s  %s{\n", outer, e.inRow("kg_q0"))
	in := outer + "    "
	e.decompose(in, "kg_q0", "kg_crest", ix)
	if e.loads == nil {
		e.loads = map[*ir.Load]string{}
	}
	for i, ld := range loads {
		x := fmt.Sprintf("kg_vk%d", i)
		e.chunkLoad(in, x, e.cType(ld.Tensor.DType), v, "kg_pvec", fmt.Sprintf("kg_vp%d", i), "kg_q0")
		e.aliasLoads(reads, ld, x+".v[kg_e]")
	}
	e.printf("%s#pragma unroll\n", in)
	e.printf("%sfor (int kg_e = 0; kg_e < %d; ++kg_e) {\n", in, v)
	e.printf("%s  const int kg_j = kg_c * %d + kg_e;\n", in, v)
	e.printf("%s  const int64_t %s = kg_q0 + kg_e;\n", in, flat)
	emit(in + "  ")
	e.printf("%s}\n", in)
	for _, ld := range loads {
		e.aliasLoads(reads, ld, "")
	}
	e.printf("%s  }\n", outer)
	e.printf("%s}\n", outer)
	e.printf("%s}\n", indent)
	e.loop = nil
}

// rowVectorLoads lists the loads of reads that a pass over the points ix
// of a row neither cached nor staged reads as vectors (alongRow), and the
// chunk's elements: 16 bytes of the widest, at most 8; 1 for none. Rows
// that are cached or staged read their registers or shared memory
// instead, and the loads beside them chunkLoads.
func (e *emitter) rowVectorLoads(ix []*ir.Index, reads ir.Expr) ([]*ir.Load, int64) {
	if len(ix) == 0 || e.cache != nil || e.stage != nil {
		return nil, 1
	}
	out := e.alongRow(reads, ix)
	if len(out) == 0 {
		return nil, 1
	}
	size := int64(0)
	for _, ld := range out {
		size = max(size, int64(ld.Tensor.DType.Size()))
	}
	return out, min(8, max(1, 16/size))
}

// onlyRowAnd reports whether every index x refers to is one of the row's
// indices or of also: values in scope when a row starts, and the row
// pass's own.
func (e *emitter) onlyRowAnd(x ir.Expr, also ...*ir.Index) bool {
	ok := true
	ir.Walk(x, func(n ir.Expr) bool {
		if ref, isRef := n.(*ir.IndexRef); isRef && !slices.Contains(also, ref.Index) && !slices.Contains(e.rowIndex, ref.Index) {
			ok = false
		}
		return ok
	})
	return ok
}

// rowLoop opens a loop of the block's threads over n points of a row: a
// grid-stride loop, or with the row cached, the unrolled loop over the
// thread's cached elements (flat is the point, kg_j the register). It
// returns the indentation of the loop's body.
func (e *emitter) rowLoop(indent, flat, n string, ix []*ir.Index) string {
	if e.cache == nil {
		if e.stage != nil {
			e.loop = ix[0] // its loads of staged rows read shared memory
			if e.cluster > 1 {
				// A cluster's block takes its piece of the staged row.
				e.printf("%s#pragma unroll 4\n", indent)
				e.printf("%sfor (int64_t %s = kg_lo + threadIdx.x; %s < kg_hi; %s += blockDim.x) {\n", indent, flat, flat, flat)
				return indent + "  "
			}
		}
		e.printf("%s#pragma unroll 4\n", indent)
		e.printf("%sfor (int64_t %s = %s; %s < %s; %s += %s) {\n", indent, flat, e.rowTid, flat, n, flat, e.rowThreads)
		return indent + "  "
	}
	e.loop = ix[0]
	e.printf("%s#pragma unroll\n", indent)
	e.printf("%sfor (int kg_j = 0; kg_j < %d; ++kg_j) {\n", indent, e.cacheJ)
	if v := e.cacheVec; v > 1 {
		e.printf("%s  const int64_t %s = ((int64_t)(kg_j / %d) * %d + %s) * %d + kg_j %% %d;\n", indent, flat, v, e.cacheThreads, e.rowTid, v, v)
	} else {
		e.printf("%s  const int64_t %s = %s + (int64_t)kg_j * %d;\n", indent, flat, e.rowTid, e.cacheThreads)
	}
	e.printf("%s  %s{\n", indent, e.inRow(flat))
	return indent + "    "
}

// inRow is the test, "if (flat < n) " with its space, that register
// point flat of a cached row lies in the row; empty where every
// register's point does (the row is a whole number of the threads'
// chunks), so that each element costs no comparison.
func (e *emitter) inRow(flat string) string {
	if e.cacheN%(e.cacheThreads*e.cacheVec) == 0 {
		return ""
	}
	return fmt.Sprintf("if (%s < %dL) ", flat, e.cacheN)
}

// storeChunks writes the row's output elements of the cached row's
// chunks (lower.RowVec): each chunk's values into a vector, stored with one
// vector store where aligned (kg_vec), as are the chunk's elements of the
// loads (the output loop's other operands read along the row, such as a
// layernorm's weights).
func (e *emitter) storeChunks(indent string, s *ir.Stmt, loads []*ir.Load) {
	v := e.cacheVec
	col := s.Index[len(s.Index)-1]
	out := e.cType(s.Target.DType)
	e.loop = col
	e.printf("%s#pragma unroll\n", indent)
	e.printf("%sfor (int kg_c = 0; kg_c < %d; ++kg_c) {\n", indent, e.cacheJ/v)
	e.printf("%s  const int64_t kg_q0 = ((int64_t)kg_c * %d + %s) * %d;\n", indent, e.cacheThreads, e.rowTid, v)
	e.printf("%s  %s{\n", indent, e.inRow("kg_q0"))
	in := indent + "    "
	e.decompose(in, "kg_q0", "kg_crest", s.Index[len(s.Index)-1:])
	if e.loads == nil {
		e.loads = map[*ir.Load]string{}
	}
	for i, ld := range loads {
		x := fmt.Sprintf("kg_vx%d", i)
		e.chunkLoad(in, x, e.cType(ld.Tensor.DType), v, "kg_vec", name(ld.Tensor.Name), e.linear(ld.Index, ld.Tensor.Shape))
		e.aliasLoads(s.Value, ld, x+".v[kg_e]")
	}
	refs := lower.Refs(s.Index)
	e.printf("%sKgVec<%s, %d> kg_vy;\n", in, out, v)
	e.printf("%s#pragma unroll\n", in)
	e.printf("%sfor (int kg_e = 0; kg_e < %d; ++kg_e) {\n", in, v)
	e.printf("%s  const int kg_j = kg_c * %d + kg_e;\n", in, v)
	e.printf("%s  const int64_t kg_q = kg_q0 + kg_e;\n", in)
	e.decompose(in+"  ", "kg_q", "kg_crest", s.Index[len(s.Index)-1:])
	e.printf("%s  kg_vy.v[kg_e] = %s;\n", in, e.expr(s.Value))
	e.printf("%s}\n", in)
	at := e.linear(refs, s.Target.Shape)
	e.printf("%sif (kg_vec) {\n", in)
	e.printf("%s  %s = kg_vy;\n", in, vecAt(out, v, name(s.Target.Name), at))
	e.printf("%s} else {\n", in)
	e.printf("%s  #pragma unroll\n", in)
	e.printf("%s  for (int kg_e = 0; kg_e < %d; ++kg_e) %s[%s + kg_e] = kg_vy.v[kg_e];\n", in, v, name(s.Target.Name), at)
	e.printf("%s}\n", in)
	for _, ld := range loads {
		e.aliasLoads(s.Value, ld, "")
	}
	e.printf("%s  }\n", indent)
	e.printf("%s}\n", indent)
	e.loop = nil
}

// chunkLoad declares x, a vector of v elements of type t, and reads into
// it the chunk at base[off, off + v): one vector load where cond holds
// (the chunk aligned), else element by element.
func (e *emitter) chunkLoad(in, x, t string, v int64, cond, base, off string) {
	e.printf("%sKgVec<%s, %d> %s;\n", in, t, v, x)
	e.printf("%sif (%s) {\n", in, cond)
	e.printf("%s  %s = *(const KgVec<%s, %d>*)(%s + %s);\n", in, x, t, v, base, off)
	e.printf("%s} else {\n", in)
	e.printf("%s  #pragma unroll\n", in)
	e.printf("%s  for (int kg_e = 0; kg_e < %d; ++kg_e) %s.v[kg_e] = %s[%s + kg_e];\n", in, v, x, base, off)
	e.printf("%s}\n", in)
}

// aliasLoads makes every load in x that reads ld's element render as v
// (while e.loads holds it), or with v empty, as a load again.
func (e *emitter) aliasLoads(x ir.Expr, ld *ir.Load, v string) {
	ir.Walk(x, func(x ir.Expr) bool {
		if other, ok := x.(*ir.Load); ok && sameLoad(other, ld) {
			if v == "" {
				delete(e.loads, other)
			} else {
				e.loads[other] = v
			}
		}
		return true
	})
}

func (e *emitter) closeRowLoop(indent string) {
	if e.cache != nil {
		e.printf("%s  }\n", indent)
	}
	e.loop = nil
	e.printf("%s}\n", indent)
}

// blockReductions computes each top-level reduction of v across the
// block into a register that expr then uses in its place.
func (e *emitter) blockReductions(indent string, v ir.Expr) {
	for _, r := range ir.TopReductions(v) {
		if _, done := e.reduced[r]; done {
			continue // an online pass's (onlinePass) or the staging's (stageAccs)
		}
		e.onePass(indent, r, e.plainAcc(r, "kg_part"))
	}
}

// A rowAcc is what a pass over a row computes at its points: declare
// declares the registers that its reductions will stand for (e.reduced),
// open the thread's own, point takes one point (the pass's index in
// scope), and close combines the row's threads' parts into the first.
type rowAcc struct {
	declare, open, point, close func(indent string)
}

// onePass computes a in a pass of its own over the points of reduction
// r (its axes and body), in a block that scopes the thread's registers.
func (e *emitter) onePass(indent string, r *ir.Reduce, a rowAcc) {
	a.declare(indent)
	e.printf("%s{\n", indent)
	a.open(indent + "  ")
	e.rowPass(indent+"  ", "kg_k", e.paren(lower.Extent(r.Axes)), r.Axes, r.Body, nil, func(in string) {
		e.decompose(in, "kg_k", "kg_krest", r.Axes)
		a.point(in)
	})
	a.close(indent + "  ")
	e.printf("%s}\n", indent)
}

// plainAcc is reduction r, each thread's part in register part.
func (e *emitter) plainAcc(r *ir.Reduce, part string) rowAcc {
	reg := fmt.Sprintf("kg_r%d", e.acc)
	e.acc++
	t := e.cType(r.T)
	return rowAcc{
		declare: func(in string) { e.printf("%s%s %s;\n", in, t, reg) },
		open:    func(in string) { e.printf("%s%s %s = %s;\n", in, t, part, identity(r.Op, r.T)) },
		point: func(in string) {
			e.shareUse = e.shareUses[r]
			e.printf("%s%s = %s;\n", in, part, e.accumulate(r, part))
			e.shareUse = nil
		},
		close: func(in string) {
			e.reduceAcross(in, reg, r.Op, r.T, part)
			e.reduced[r] = reg
		},
	}
}

// reduceAcross combines each thread's part of a row (variable part, of
// type t) with op across the row's threads into dst, which every one of
// them gets: within the group, the block, or the cluster.
func (e *emitter) reduceAcross(indent, dst string, op ir.ReduceOp, t ir.DType, part string) {
	ct := e.cType(t)
	e.combineAcross(indent, dst, ct, part, identity(op, t), combine(op, ct, "a", "b"), fmt.Sprintf("kg_smem_%s", t))
}

// combineAcross is reduceAcross for a part of C type ct, whose identity
// and combination of a and b are C expressions; a block's combination
// takes smem, 32 of ct in shared memory, for its warps' results.
func (e *emitter) combineAcross(indent, dst, ct, part, identity, combination, smem string) {
	switch {
	case e.group > 0:
		e.printf("%s%s = kg_group_reduce<%d, %s>(%s, [](%s a, %s b) { return %s; });\n",
			indent, dst, e.group, ct, part, ct, ct, combination)
	case e.cluster > 1:
		e.printf("%s%s = kg_cluster_reduce<%d, %s>(%s, %s, [](%s a, %s b) { return %s; }, %s, kg_turn++);\n",
			indent, dst, e.cluster, ct, part, identity, ct, ct, combination, smem)
	default:
		e.printf("%s%s = kg_block_reduce<%s>(%s, %s, [](%s a, %s b) { return %s; }, %s);\n",
			indent, dst, ct, part, identity, ct, ct, combination, smem)
	}
}

// centeredPass computes a CenteredSum's sum in one pass over the row
// (see lower.CenteredSum) into a register that the reduction then stands
// for (centeredAcc), from which centeredSquares makes the squared
// deviations once the mean is known.
func (e *emitter) centeredPass(indent string, p lower.CenteredSum) {
	e.onePass(indent, p.Sum, e.centeredAcc(p, "kg_part"))
}

// centeredAcc is a CenteredSum's sum, each thread keeping its part in
// register part and, shifted by its first point K, the sum S1 and the sum of
// squares S2 of its n points (centeredNames). The pass's end combines
// the threads' moments in one reduction (moments.go) into the row's,
// which outlive the pass: its sum is the reduction's result.
func (e *emitter) centeredAcc(p lower.CenteredSum, part string) rowAcc {
	t := p.Sum.T
	ct := e.cType(t)
	sum := fmt.Sprintf("kg_r%d", e.acc)
	e.acc++
	zero := identity(ir.Sum, t)
	cn, ck, cs1, cs2 := centeredNames(p)
	mt := e.moments(ct)
	return rowAcc{
		declare: func(in string) {
			e.printf("%s%s %s;  // the sum for %s; with the squares of its points' deviations, in one pass\n", in, ct, sum, p.Mean.Name)
			e.printf("%s%s %s = %s, %s = %s, %s = %s, %s = %s;\n", in, ct, cn, zero, ck, zero, cs1, zero, cs2, zero)
			e.printf("%s%s %s;  // the row's moments\n", in, mt, momentsName(p))
		},
		open: func(in string) { e.printf("%s%s %s = %s;\n", in, ct, part, zero) },
		point: func(in string) {
			e.printf("%sconst %s kg_cx = %s;\n", in, ct, e.expr(p.Sum.Body))
			e.printf("%sif (%s == %s) %s = kg_cx;  // the thread's shift: its first point\n", in, cn, zero, ck)
			e.printf("%sconst %s kg_cd = kg_cx - %s;\n", in, ct, ck)
			e.printf("%s%s = %s + kg_cd;\n", in, cs1, cs1)
			e.printf("%s%s = %s + kg_cd * kg_cd;\n", in, cs2, cs2)
			e.printf("%s%s = %s + %s;\n", in, cn, cn, constant(ir.FloatConst(t, 1)))
			e.printf("%s%s = %s + kg_cx;\n", in, part, part)
		},
		close: func(in string) {
			mo, smem := momentsName(p), ""
			if e.group == 0 {
				smem = "kg_smem_mo_" + name(p.Mean.Name)
				e.printf("%s__shared__ %s %s[32];\n", in, mt, smem)
			}
			e.combineAcross(in, mo, mt, fmt.Sprintf("kg_moments_of(%s, %s, %s, %s, %s)", cn, ck, cs1, cs2, part),
				mt+"{}", "kg_moments_merge(a, b)", smem)
			e.printf("%s%s = %s.sum;\n", in, sum, mo)
			e.reduced[p.Sum] = sum
		},
	}
}

// centeredSquares is a CenteredSum's squared deviations from the mean
// (register mean), from the row's moments (centeredAcc): m2 + n (mean of
// the moments - mean)^2.
func (e *emitter) centeredSquares(indent string, p lower.CenteredSum, mean string) {
	t := p.Squares.T
	ct := e.cType(t)
	sq := fmt.Sprintf("kg_r%d", e.acc)
	e.acc++
	mo := momentsName(p)
	e.printf("%s%s %s;  // the squares of the deviations from %s\n", indent, ct, sq, p.Mean.Name)
	e.printf("%s{\n", indent)
	e.printf("%s  const %s kg_cm = %s.mean - %s;\n", indent, ct, mo, mean)
	e.printf("%s  %s = %s.m2 + %s.n * kg_cm * kg_cm;\n", indent, sq, mo, mo)
	e.printf("%s}\n", indent)
	e.reduced[p.Squares] = sq
}

// centeredNames are the registers of a CenteredSum's thread: its count
// n, shift K and shifted sums S1 and S2, named after the mean's let.
func centeredNames(p lower.CenteredSum) (n, k, s1, s2 string) {
	m := name(p.Mean.Name)
	return "kg_cn_" + m, "kg_ck_" + m, "kg_cs1_" + m, "kg_cs2_" + m
}

// momentsName is the register of a CenteredSum's row moments.
func momentsName(p lower.CenteredSum) string { return "kg_mo_" + name(p.Mean.Name) }

// onlinePass computes an OnlineSum's max and sum of shifted exponentials
// in one pass over the row (see lower.OnlineSum, onlineAcc).
func (e *emitter) onlinePass(indent string, p lower.OnlineSum) {
	e.onePass(indent, p.Max, e.onlineAcc(p, "kg_om", "kg_os"))
}

// onlineAcc is an OnlineSum's max and sum, in two registers that the two
// reductions then stand for. Each thread keeps its running max om and
// sum os; the threads' maxima combine first, then their sums, each
// rescaled to the row's max.
func (e *emitter) onlineAcc(p lower.OnlineSum, om, os string) rowAcc {
	t := p.Max.T
	ct := e.cType(t)
	m, s := fmt.Sprintf("kg_r%d", e.acc), fmt.Sprintf("kg_r%d", e.acc+1)
	e.acc += 2
	inf, zero := identity(ir.Max, t), identity(ir.Sum, t)
	return rowAcc{
		declare: func(in string) {
			e.printf("%s%s %s, %s;  // %s and its sum of exponentials, in one pass\n", in, ct, m, s, p.Shift.Name)
		},
		open: func(in string) { e.printf("%s%s %s = %s, %s = %s;\n", in, ct, om, inf, os, zero) },
		point: func(in string) {
			e.printf("%sconst %s kg_ox = %s;\n", in, ct, e.expr(p.Max.Body))
			e.printf("%sconst %s kg_onm = %s;\n", in, ct, combine(ir.Max, ct, om, "kg_ox"))
			e.printf("%sif (kg_onm != %s) {  // a new max: the sum so far, rescaled to it (nothing after -inf)\n", in, om)
			e.printf("%s  %s = %s == %s ? %s : %s * kg_exp(%s - kg_onm);\n", in, os, om, inf, zero, os, om)
			e.printf("%s  %s = kg_onm;\n", in, om)
			e.printf("%s}\n", in)
			e.printf("%s%s = %s + kg_exp(kg_ox - %s);\n", in, os, os, om)
		},
		close: func(in string) {
			e.reduceAcross(in, m, ir.Max, t, om)
			e.printf("%s%s = %s == %s ? %s : %s == %s ? %s : %s * kg_exp(%s - %s);\n", in, os, om, m, os, om, inf, zero, os, om, m)
			e.reduceAcross(in, s, ir.Sum, t, os)
			e.reduced[p.Max], e.reduced[p.Sum] = m, s
		},
	}
}

func combine(op ir.ReduceOp, t, a, b string) string {
	switch op {
	case ir.Sum:
		return a + " + " + b
	case ir.Prod:
		return a + " * " + b
	case ir.Max:
		return fmt.Sprintf("kg_max<%s>(%s, %s)", t, a, b)
	}
	return fmt.Sprintf("kg_min<%s>(%s, %s)", t, a, b)
}
