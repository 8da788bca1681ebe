package runtime

import (
	"errors"
	"testing"
)

// TestTimeShortAsGraphs: a short run is probed with ten samples, then timed
// with the full protocol as graphs; a long one without; graphs and the
// clean flush skip the probe; a failed probe is the answer.
func TestTimeShortAsGraphs(t *testing.T) {
	type call struct {
		reps  int
		minMS float64
		graph bool
	}
	for _, tc := range []struct {
		name  string
		spec  TimeSpec
		runUS float64
		err   error
		want  []call
	}{
		{"short", TimeSpec{}, 2.5, nil, []call{{10, 1e-3, false}, {0, 0, true}}},
		{"at the bound", TimeSpec{MinMS: 40}, GraphBelowUS, nil, []call{{10, 1e-3, false}, {0, 40, false}}},
		{"long", TimeSpec{MinReps: 20}, 180, nil, []call{{10, 1e-3, false}, {20, 0, false}}},
		{"graphs asked for", TimeSpec{Graph: true}, 2.5, nil, []call{{0, 0, true}}},
		{"clean flush", TimeSpec{Flush: FlushClean}, 2.5, nil, []call{{0, 0, false}}},
		{"probe fails", TimeSpec{}, 2.5, errors.New("launch failed"), []call{{10, 1e-3, false}}},
	} {
		var got []call
		tm, err := TimeShortAsGraphs(tc.spec, func(s TimeSpec) (Timing, error) {
			got = append(got, call{s.MinReps, s.MinMS, s.Graph})
			if s.Flush != tc.spec.Flush || s.WarmupMS != tc.spec.WarmupMS {
				t.Errorf("%s: spec %+v lost the flush or warm-up of %+v", tc.name, s, tc.spec)
			}
			return Timing{MedianUS: tc.runUS, Reps: len(got)}, tc.err
		})
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.err)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: calls %+v, want %+v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: call %d %+v, want %+v", tc.name, i, got[i], tc.want[i])
			}
		}
		if tc.err == nil && tm.Reps != len(got) {
			t.Errorf("%s: returned the timing of call %d, want the last (%d)", tc.name, tm.Reps, len(got))
		}
	}
}
