# Experiment (session 45): one launch of kgen's Triton softmax_vocab (128
# rows of 50257 f32), for Nsight Compute to measure: does the L2 serve the
# outputs' pass its second read of each row (DRAM bytes read near 25.7 MB)
# or not (near 51.5 MB)? Two launches, each after a read of 256 MiB.
#   ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum ... python3 testsuite/exp/triton_softmax_ncu.py DIR
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from triton_softmax_split import D, R, load_kgen  # noqa: E402

torch.manual_seed(0)
X = torch.randn(R, D, device="cuda") * 4
Y = torch.empty_like(X)
k = load_kgen(sys.argv[1])
flush = torch.ones(64 << 20, dtype=torch.int32, device="cuda")
for _ in range(2):
    flush.sum()
    k["fn"][(R,)](X, Y, **k["constexprs"], num_warps=k["num_warps"], num_stages=k["num_stages"])
torch.cuda.synchronize()
print("max |diff|", (Y - torch.softmax(X, 1)).abs().max().item())
