#!/bin/bash
# The thirty-third session's experiment on rows held on chip by a
# cooperative grid (testsuite/exp/grid_resident.cu): a groupnorm-like
# normalization of 128 rows of 2 MiB f32 as kgen plans it (two passes
# over X) against kernels that read X once, and a copy. Four calls:
# first/ (the first version), second/ (resident loading a thread's 8
# chunks at once), third/ (and clusters of 16 blocks a row), fourth-h100/
# (and clustered2, two blocks a multiprocessor; this call for nvidia-h200
# got an H100 80GB HBM3). Each folder keeps what it ran as
# grid_resident.diff against testsuite/exp/grid_resident.cu as committed
# (patch a copy of that file with it to get the version back): the
# committed file shares its block sums and takes CHECK, the device line
# and the copy from testsuite/exp/common.cuh, the same computations; a
# fifth call, final-h100/ (an H100 again), ran it as committed.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/machine.txt"
nvcc --version | tail -1 >> "$OUT/machine.txt"
nvcc -O3 -arch=sm_90 -o "$OUT/grid_resident" testsuite/exp/grid_resident.cu > "$OUT/build.txt" 2>&1
echo "build: exit $?"
timeout -k 5 120 "$OUT/grid_resident" > "$OUT/grid_resident.txt" 2>&1
echo "run: exit $?"
rm -f "$OUT/grid_resident"
cat "$OUT/machine.txt" "$OUT/grid_resident.txt"
tar czf "$FINAL/s33-resident.tgz" -C "$OUT" . && rm -rf "$OUT"
