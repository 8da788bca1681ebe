#!/bin/sh
# Written in the forty-fifth session for the next one's first call (the
# device time ran out first; nvidia-h100-x1, bin/kgen main's tree
# carried): Nsight Compute on softmax_vocab's kernel under kgen bench,
# Triton's (2855a9b: its runner starts under KGEN_RUNNER_WRAPPER) and
# CUDA's staged one. Does the outputs' pass read X from the L2 (DRAM
# bytes read near 25.7 MB) or from the DRAM again (near 51.5 MB)?
export PATH="/usr/local/cuda/bin:$PATH"
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for t in triton:sm_90 cuda:sm_90; do
	n=$(echo $t | cut -d: -f1)
	KGEN_RUNNER_WRAPPER="ncu --log-file $OUT/ncu-$n.txt -k regex:^softmax_vocab -c 2 --metrics $M" \
		./bin/kgen bench --target $t --kernel softmax_vocab examples/softmax.kg > $OUT/bench-$n.txt 2>&1
	echo "== $t: kgen bench under ncu exit $?"
	grep -E 'softmax_vocab|dram__|lts__|gpu__time' $OUT/ncu-$n.txt
done
