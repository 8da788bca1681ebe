package runtime

import (
	"encoding/json"
	"testing"
)

// TestTimingJSON: timings are written with the same snake_case keys as the
// PyTorch baseline's (median_us, p20_us, ...), so one reader serves both.
func TestTimingJSON(t *testing.T) {
	data, err := json.Marshal(Timing{MedianUS: 1.5, P20US: 1, P80US: 2, Reps: 10, ClockMHz: 1980, Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"median_us":1.5,"p20_us":1,"p80_us":2,"reps":10,"clock_mhz":1980,"batch":4}`
	if string(data) != want {
		t.Errorf("got %s, want %s", data, want)
	}
}
