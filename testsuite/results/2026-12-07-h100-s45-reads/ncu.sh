#!/bin/sh
# The forty-fifth session's third call (nvidia-h100-x1, bin/kgen main's
# tree carried): Nsight Compute on softmax_vocab, Triton's kernel and
# CUDA's staged one: DRAM bytes read and written, L2 hit rate, time.
export PATH="/usr/local/cuda/bin:$PATH"
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
./bin/kgen build --target triton:sm_90 --kernel softmax_vocab -o /tmp/sv examples/softmax.kg > $OUT/ncu-triton.txt 2>&1
for cc in all none; do
	echo "== triton, --cache-control $cc" >> $OUT/ncu-triton.txt
	ncu --cache-control $cc -k regex:softmax_vocab --metrics $M python3 testsuite/exp/triton_softmax_ncu.py /tmp/sv >> $OUT/ncu-triton.txt 2>&1
done
KGEN_RUNNER_WRAPPER="ncu --log-file $OUT/ncu-cuda.txt -k regex:^softmax_vocab -c 2 --metrics $M" \
	./bin/kgen bench --target cuda:sm_90 --kernel softmax_vocab examples/softmax.kg > $OUT/bench-cuda.txt 2>&1
grep -E '==|softmax_vocab|dram__|lts__|gpu__time|diff' $OUT/ncu-triton.txt $OUT/ncu-cuda.txt
