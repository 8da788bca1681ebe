#!/bin/bash
# Whether a change alters what nvcc makes of kgen's output, without a GPU:
# emits each spec file with two kgens (bin/kgen-base, the tree before the
# change, and bin/kgen) for each target, compiles both sources to PTX with
# $NVCC (default nvcc) and compares the PTX (comments aside): "same" means
# identical, else it counts the lines of each side that differ.
#   NVCC=/path/to/nvcc13 testsuite/ptx_same.sh "cuda:sm_90 cuda:sm_90a" examples/conv2d.kg ...
set -u
NVCC=${NVCC:-nvcc}
targets=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$("$NVCC" --version | tail -1)"
for t in $targets; do
	arch=${t#*:}
	[ "$arch" = nvidia ] && arch=sm_90
	for f in "$@"; do
		for k in kgen-base kgen; do
			rm -rf "$work/$k"
			./bin/$k build --target "$t" --emit-only -o "$work/$k" "$f" > /dev/null 2>&1 || { echo "$t $f: $k build failed"; continue 2; }
			src=$(ls "$work/$k"/*.cu "$work/$k"/*.hip 2> /dev/null | head -1)
			"$NVCC" -arch="$arch" -ptx -x cu -o "$work/$k.ptx" "$src" 2> /dev/null || { echo "$t $f: $k's source does not compile"; continue 2; }
			grep -v '^//' "$work/$k.ptx" > "$work/$k.body"
		done
		if cmp -s "$work/kgen-base.body" "$work/kgen.body"; then
			echo "$t $f: same"
		else
			d=$(diff "$work/kgen-base.body" "$work/kgen.body")
			echo "$t $f: $(echo "$d" | grep -c '^<') of $(wc -l < "$work/kgen-base.body") lines differ ($(echo "$d" | grep -c '^>') in place of them)"
		fi
	done
done
