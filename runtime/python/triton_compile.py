# kgen's Triton compile check (runtime/toolchain_triton.go embeds it):
# compiles every entry point of a kgen-emitted Triton module for a target
# with no GPU present, and prints one JSON line per entry point.
#
#   python triton_compile.py MODULE.py BACKEND ARCH WARP JOBS
#
# BACKEND ARCH WARP is Triton's GPUTarget ("cuda" 90 32, "hip" gfx90a 64).
# The module's KERNELS table gives each entry point's jit function,
# signature, constexprs, num_warps and num_stages; the kernels are compiled
# through triton.compiler.compile on an ASTSource, skipping JITFunction's
# binder, which asks the local driver for a target.
#
# Each line: {"name", "ok", "error", "registers", "local_bytes",
# "shared_bytes", "num_warps"}; registers and local memory are read from
# the cubin's ELF section headers (NVIDIA only, -1 elsewhere).

import concurrent.futures
import importlib.util
import json
import multiprocessing
import struct
import sys
import traceback


def load_module(path):
    spec = importlib.util.spec_from_file_location("kgen_module", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cubin_resources(cubin, name):
    """Registers (the .text.NAME section's sh_info >> 24) and local memory
    bytes a thread (.nv.local.NAME's size) of kernel name in an ELF64
    cubin, or (-1, -1)."""
    try:
        if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
            return -1, -1
        shoff, = struct.unpack_from("<Q", cubin, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
        sections = []
        for i in range(shnum):
            off = shoff + i * shentsize
            sh_name, _, _, _, sh_off, sh_size, _, sh_info = struct.unpack_from("<IIQQQQII", cubin, off)
            sections.append((sh_name, sh_off, sh_size, sh_info))
        strtab = sections[shstrndx]
        def sname(s):
            start = strtab[1] + s[0]
            return cubin[start:cubin.index(b"\0", start)].decode()
        regs, local = -1, 0
        for s in sections:
            n = sname(s)
            if n == ".text." + name:
                regs = s[3] >> 24
            elif n == ".nv.local." + name:
                local = s[2]
        if regs <= 0:
            # Newer cubins record it as EIATTR_REGCOUNT (0x2f) in .nv.info:
            # entries of a format byte, an attribute byte and, for format
            # 4 (a sized value), a 16-bit size and the value (a symbol
            # index, then the count); a cubin from Triton has one kernel.
            for s in sections:
                if sname(s) != ".nv.info":
                    continue
                i, end = s[1], s[1] + s[2]
                while i + 2 <= end:
                    fmt, attr = cubin[i], cubin[i + 1]
                    if fmt == 4:
                        size, = struct.unpack_from("<H", cubin, i + 2)
                        if attr == 0x2F and size == 8:
                            regs = struct.unpack_from("<I", cubin, i + 8)[0]
                        i += 4 + size
                    elif fmt == 3:
                        i += 4
                    elif fmt == 2:
                        i += 3
                    else:
                        i += 2
        return regs, local
    except Exception:
        return -1, -1


_module = None


def compile_one(args):
    path, name, backend, arch, warp = args
    global _module
    out = {"name": name, "ok": False, "error": "", "registers": -1, "local_bytes": -1, "shared_bytes": -1, "num_warps": 0}
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        if _module is None:
            _module = load_module(path)
        k = _module.KERNELS[name]
        # Pointers 16-byte aligned, as kgen's runner launches them (it
        # specializes as Triton's JIT does: runner_triton.py's variant).
        names = list(k["signature"])
        attrs = {(names.index(n),): [["tt.divisibility", 16]] for n, ty in k["signature"].items() if ty.startswith("*")}
        src = ASTSource(fn=k["fn"], signature=k["signature"], constexprs=k["constexprs"], attrs=attrs)
        target = GPUTarget(backend, int(arch) if backend == "cuda" else arch, warp)
        ck = triton.compiler.compile(src, target=target, options={"num_warps": k["num_warps"], "num_stages": k["num_stages"]})
        out["ok"] = True
        out["shared_bytes"] = int(getattr(ck.metadata, "shared", -1))
        out["num_warps"] = k["num_warps"]
        if "cubin" in ck.asm:
            out["registers"], out["local_bytes"] = cubin_resources(ck.asm["cubin"], ck.metadata.name)
    except Exception as e:
        msg = "".join(traceback.format_exception_only(type(e), e)).strip()
        out["error"] = msg[-4000:]
    return out


def main():
    path, backend, arch, warp, jobs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    names = list(load_module(path).KERNELS)
    work = [(path, n, backend, arch, warp) for n in names]
    if jobs <= 1 or len(work) <= 1:
        results = map(compile_one, work)
    else:
        ctx = multiprocessing.get_context("fork")
        pool = concurrent.futures.ProcessPoolExecutor(max_workers=min(jobs, len(work)), mp_context=ctx)
        results = pool.map(compile_one, work)
    for r in results:
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
