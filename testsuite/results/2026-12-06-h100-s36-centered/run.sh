#!/bin/bash
# The thirty-sixth session's first call, on nvidia-h100-x1: the branch
# s35-centered-chunks against main (e5f624e, bin/kgen-base).
#   kgen-25f: cfaea3a, a centered sum's part as n K + S1 at the end and a
#             staged row's whole chunk counting its points once;
#   kgen-826: e80a531, that plus the staged outputs' loop with 32-bit
#             indices (bin/kgen, the one tested for correctness).
set -u
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W"
OUT=$W KGENS="kgen-base kgen-25f kgen-826" EXTRA=layernorm_bert,instancenorm_kb bash testsuite/gpu_row_launches.sh
tar czf "$FINAL/s36-centered.tgz" -C "$W" . && rm -rf "$W"
