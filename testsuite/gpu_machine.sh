#!/bin/sh
# Writes what a GPU call ran on to $OUT/machine.txt and prints it: the
# date, each GPU (index, name, driver), nvcc's version and the CPUs. The
# tuning scripts start with it.
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
{
	date -u +%Y-%m-%dT%H:%M:%SZ
	nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
	nvcc --version | tail -1
	echo "cpus $(nproc)"
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
