package tune

import (
	"context"
	"slices"
	"sort"

	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
)

// Confirmed is one finalist's re-timing.
type Confirmed struct {
	Config lower.Config
	Rounds []float64 // the median of each round, in round order
	// Median is the median of Rounds; Noise half their range, the
	// run-to-run variation the comparison must see past.
	Median, Noise float64
	Err           error // the finalist failed when re-timed
}

// Confirm re-times the finalists interleaved, A B C A B C ..., rounds
// times, so that a drift of the GPU's clocks or temperature during the
// confirmation touches every finalist alike, and returns their figures in
// the finalists' order. A finalist that fails once is out.
func Confirm(ctx context.Context, finalists []lower.Config, rounds int, time func(context.Context, lower.Config) (kgrt.Timing, error)) []Confirmed {
	out := make([]Confirmed, len(finalists))
	for i, c := range finalists {
		out[i].Config = c
	}
	for range rounds {
		for i := range out {
			if out[i].Err != nil {
				continue
			}
			tm, err := time(ctx, out[i].Config)
			if err != nil {
				out[i].Err = err
				continue
			}
			out[i].Rounds = append(out[i].Rounds, tm.MedianUS)
		}
	}
	for i := range out {
		if len(out[i].Rounds) > 0 {
			r := slices.Sorted(slices.Values(out[i].Rounds))
			out[i].Median = median(r)
			out[i].Noise = (r[len(r)-1] - r[0]) / 2
		}
	}
	return out
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// MinNoise is the least relative difference Winner treats as real: below
// it, the timing protocol cannot tell two configurations apart.
const MinNoise = 0.01

// Winner picks the winner among confirmed finalists, or -1 when all
// failed. The rule: the finalist with the lowest median is the fastest;
// every finalist whose median exceeds the fastest's by no more than the
// larger of their two noises (and at least MinNoise of the fastest's
// median) ties with it; among the tied, the default configuration wins,
// then the smallest configuration, comparing parameter values in the
// order of the parameters' names. Two runs on the same machine so pick the
// same configuration unless one is faster by more than the noise.
func Winner(fin []Confirmed, def lower.Config) int {
	fastest := -1
	for i, f := range fin {
		if f.Err == nil && len(f.Rounds) > 0 && (fastest < 0 || f.Median < fin[fastest].Median) {
			fastest = i
		}
	}
	if fastest < 0 {
		return -1
	}
	best := fin[fastest]
	var tied []int
	for i, f := range fin {
		if f.Err != nil || len(f.Rounds) == 0 {
			continue
		}
		tol := max(f.Noise, best.Noise, MinNoise*best.Median)
		if f.Median-best.Median <= tol {
			tied = append(tied, i)
		}
	}
	sort.SliceStable(tied, func(a, b int) bool {
		x, y := fin[tied[a]].Config, fin[tied[b]].Config
		if dx, dy := sameConfig(x, def), sameConfig(y, def); dx != dy {
			return dx
		}
		return compareConfigs(x, y) < 0
	})
	return tied[0]
}

func sameConfig(a, b lower.Config) bool {
	return b != nil && Key(a) == Key(b)
}

// compareConfigs orders configurations by their values, parameter by
// parameter in name order.
func compareConfigs(a, b lower.Config) int {
	names := map[string]bool{}
	for k := range a {
		names[k] = true
	}
	for k := range b {
		names[k] = true
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if c := compareInt(a[k], b[k]); c != 0 {
			return c
		}
	}
	return 0
}
