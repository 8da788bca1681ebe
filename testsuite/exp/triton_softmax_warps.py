# Experiment (session 44): kgen's Triton softmax_vocab (128 rows of 50257
# f32, a program a row, the max and sum in one online pass, then the
# outputs) launched with shapes its tuning space lacks. kgen tune found
# nothing faster than BLOCK 4096 at 16 warps among 1 to 16 warps; one
# program a multiprocessor leaves 16 warps' loads in flight on each, and
# 32 warps (1024 threads, the most a program may have) would double them.
# The kgen module's own kernel, launched with each BLOCK, num_warps and
# num_stages below, is timed beside a copy as triton_softmax_split.py
# times its plans (measure).
#   python3 testsuite/exp/triton_softmax_warps.py DIR   (DIR: kgen build --target triton:sm_90 --kernel softmax_vocab -o DIR examples/softmax.kg)
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from triton_softmax_split import D, R, load_kgen, measure  # noqa: E402


def main():
    torch.manual_seed(0)
    X = torch.randn(R, D, device="cuda") * 4
    Y = torch.empty_like(X)
    ref = torch.softmax(X, dim=1)
    k = load_kgen(sys.argv[1])
    plans = {}
    for block, warps, stages in ((4096, 16, 1), (4096, 16, 3), (4096, 32, 1), (8192, 32, 1), (8192, 32, 2), (16384, 32, 1), (8192, 16, 1)):
        c = dict(k["constexprs"], BLOCK=block)
        plans[f"kgen B{block} w{warps} s{stages}"] = (lambda c, w, s: lambda: k["fn"][(R,)](X, Y, **c, num_warps=w, num_stages=s))(c, warps, stages)
    measure(plans, X, Y, ref)


if __name__ == "__main__":
    main()
