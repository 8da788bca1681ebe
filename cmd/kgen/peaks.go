package main

import (
	"context"
	"fmt"
	"slices"

	kgrt "kgen.dev/kgen/runtime"
)

// matrixPeaks measures the matrix units' peaks of GPU 0 (kgrt.MeasurePeaks)
// with a CUDA runner of its own, whatever the target: the probes are CUDA
// and the rates are the GPU's. nvccFlag is --nvcc. With withCopy it
// measures the device-to-device copy bandwidth first. note says what the
// peaks lack (kgrt.MeasurePeaks).
func matrixPeaks(ctx context.Context, nvccFlag string, withCopy bool) (copyGBps float64, peaks []kgrt.Peak, note string, err error) {
	nvcc, err := kgrt.FindNVCC(nvccFlag)
	if err != nil {
		return 0, nil, "", err
	}
	r, err := kgrt.StartRunner(ctx, nvcc.Path, "", 0)
	if err != nil {
		return 0, nil, "", err
	}
	defer r.Close()
	if withCopy {
		if copyGBps, err = r.CopyBandwidth(ctx, 0); err != nil {
			return 0, nil, "", err
		}
	}
	peaks, note, err = kgrt.MeasurePeaks(ctx, nvcc, r, "")
	return copyGBps, peaks, note, err
}

// timedPeaks is matrixPeaks for a command that times kernels (cmd: "bench",
// "test"): it warns on stderr when the peaks are not measured, or what
// they lack, and returns that as note for the report.
func timedPeaks(ctx context.Context, cmd, nvccFlag string) (peaks []kgrt.Peak, note string) {
	_, peaks, note, err := matrixPeaks(ctx, nvccFlag, false)
	switch {
	case err != nil:
		note = err.Error()
		fmt.Fprintf(stderr, "kgen %s: warning: the matrix units' peaks are not measured, so no TFLOP/s is a fraction of one: %v\n", cmd, err)
	case note != "":
		fmt.Fprintf(stderr, "kgen %s: warning: %s\n", cmd, note)
	}
	return peaks, note
}

// lowestPeaks adds the peaks of another run to peaks: each probe's rate
// the lower of the runs', as a merged report's copy bandwidth is.
func lowestPeaks(peaks, more []kgrt.Peak) []kgrt.Peak {
	for _, pk := range more {
		j := slices.IndexFunc(peaks, func(q kgrt.Peak) bool { return q.Kernel == pk.Kernel })
		switch {
		case j < 0:
			peaks = append(peaks, pk)
		case pk.TFLOPs < peaks[j].TFLOPs:
			peaks[j] = pk
		}
	}
	return peaks
}
