package cuda

import (
	"fmt"
	"strings"

	"kgen.dev/kgen/ir"
)

// wgmmaOp names the struct whose mma issues one wgmma.mma_async of shape
// m64nNk16 on operands of type dt (transposed: MN-major in shared
// memory), and has the file define it. PTX lists each of the N / 2
// accumulator registers of a thread as an operand, so the instruction is
// spelled out per N here rather than in the prelude.
func (e *emitter) wgmmaOp(dt ir.DType, n int64, transA, transB bool) string {
	ty := map[ir.DType]string{ir.BF16: "bf16", ir.F16: "f16"}[dt]
	op := fmt.Sprintf("KgWgmma%sN%d", strings.ToUpper(ty[:1])+ty[1:], n)
	if _, ok := e.file.ops[op]; !ok {
		e.file.ops[op] = wgmmaStruct(op, ty, n)
		e.file.opOrder = append(e.file.opOrder, op)
	}
	return fmt.Sprintf("%s<%d, %d>", op, b2i(transA), b2i(transB))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func wgmmaStruct(op, ty string, n int64) string {
	var regs, outs []string
	for i := range n / 2 {
		regs = append(regs, fmt.Sprintf("%%%d", i))
		outs = append(outs, fmt.Sprintf(`"+f"(d[%d])`, i))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n// %s<TA, TB>::mma is d += a b, one wgmma.mma_async.m64n%dk16 with %s operands\n", op, n, ty)
	fmt.Fprintf(&sb, "// from shared memory; TA and TB are 1 for MN-major (transposed) tiles.\n")
	fmt.Fprintf(&sb, "template <int TA, int TB>\nstruct %s {\n#ifndef KGEN_HOST_EMULATION\n", op)
	fmt.Fprintf(&sb, "  static __device__ __forceinline__ void mma(float* d, uint64_t a, uint64_t b) {\n")
	fmt.Fprintf(&sb, "    asm volatile(\n        \"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n", n/2+2)
	fmt.Fprintf(&sb, "        \"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s \"\n", n, ty, ty)
	for i := 0; i < len(regs); i += 16 {
		open, end := "", ", "
		if i == 0 {
			open = "{"
		}
		if i+16 >= len(regs) {
			end = "}, "
		}
		fmt.Fprintf(&sb, "        \"%s%s%s\"\n", open, strings.Join(regs[i:min(i+16, len(regs))], ", "), end)
	}
	fmt.Fprintf(&sb, "        \"%%%d, %%%d, p, 1, 1, %%%d, %%%d;\\n}\\n\"\n", n/2, n/2+1, n/2+3, n/2+4)
	for i := 0; i < len(outs); i += 8 {
		lead := "      , "
		if i == 0 {
			lead = "        : "
		}
		fmt.Fprintf(&sb, "%s%s\n", lead, strings.Join(outs[i:min(i+8, len(outs))], ", "))
	}
	fmt.Fprintf(&sb, "        : \"l\"(a), \"l\"(b), \"r\"(1), \"n\"(TA), \"n\"(TB));\n  }\n#endif\n};\n")
	return sb.String()
}
