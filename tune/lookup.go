package tune

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Query asks the database for the configuration to build an instance
// with.
type Query struct {
	Hash      string
	Dims      map[string]int64
	Target    string
	Templates []string
	// Device is the GPU's name; empty when the build does not know it
	// (no GPU on this machine and no --device), in which case records of
	// the same target from any device serve.
	Device string
	// Defaults, when set, are the heuristic's configurations at the
	// query's shape (Key form, one per launch): a shape other than the
	// query's then advises only where the tuning there started from these
	// same defaults (see Lookup).
	Defaults []string
}

// Choice is what the database advises for a query.
type Choice struct {
	Configs []string // one per launch
	// Source says where they come from: "exact" (tuned at this shape),
	// "nearest" (tuned at the nearest recorded shape).
	Source string
	Shape  string // the shape the records are of
	Device string
	TimeUS float64
	// Declined, when Lookup returns false for want of a record that
	// transfers, says why the nearest shape's records did not.
	Declined string
}

// Lookup chooses from recs the configuration for q: the records must be
// of the same kernel (IR hash), target and templates (with their
// versions), and of q.Device when it is set, else of the device with the
// most such records (ties to the first name). At the exact shape it takes
// the last confirmed winner, else the fastest evaluation; without records
// at the exact shape, the same at the nearest shape recorded, nearness
// being the sum over dims of |log((1+a)/(1+b))|, if it is no farther than
// maxNearestDistance. False when no record fits: the build keeps the
// heuristic default.
//
// With q.Defaults set, the exact shape's records stand where their
// search started from q.Defaults or measured them: a search that started
// from an older heuristic default never compared its winner with today's
// (Declined says so, and kgen tune measures it). On the H100, a stride-3
// 1-D convolution tuned to 13.74 us against its default of then (35.02)
// took 14.21 us where its default of now, chosen since, took 11.54
// (testsuite/results/2026-11-27-h100-s22-tuned-vs-default-triton/).
//
// With q.Defaults set, the nearest shape's choice transfers only where
// the heuristic's defaults there (its evaluations marked Default) are
// q.Defaults: what the tuning there found, it found against those
// defaults. Where the heuristic chose otherwise at the query's shape, it
// had adapted to that shape, and the build keeps its choice (Declined
// says so). On the H100, softmax over 4096 rows of 16384 f32 took 185 us
// with its default (512 threads, rows in registers) and 267 us with the
// winner of 128 rows of 50257 (1024 threads, rows staged in shared
// memory), which was that shape's own default
// (testsuite/results/2026-11-27-h100-s19-tuned-vs-default/memory/).
func Lookup(recs []Record, q Query) (Choice, bool) {
	tmpl := strings.Join(q.Templates, "+")
	var fit []Record
	perDevice := map[string]int{}
	var failed []Record // measured, and failed: never chosen
	for _, r := range recs {
		if r.Hash != q.Hash || r.Target != q.Target || strings.Join(r.Templates, "+") != tmpl || len(r.Configs) != len(q.Templates) {
			continue
		}
		if r.Kind == KindEval && r.Time == nil {
			failed = append(failed, r)
			continue
		}
		if q.Device != "" && r.Device.Name != q.Device {
			continue
		}
		fit = append(fit, r)
		perDevice[r.Device.Name]++
	}
	if len(fit) == 0 {
		return Choice{}, false
	}
	device := q.Device
	if device == "" {
		for name, n := range perDevice {
			if device == "" || n > perDevice[device] || (n == perDevice[device] && name < device) {
				device = name
			}
		}
	}
	// The nearest shape, exact if recorded.
	shape, dist := "", math.Inf(1)
	for _, r := range fit {
		if r.Device.Name != device {
			continue
		}
		d := shapeDistance(q.Dims, r.Dims)
		if d < dist || (d == dist && r.Shape < shape) {
			shape, dist = r.Shape, d
		}
	}
	if dist > maxNearestDistance {
		return Choice{Shape: shape, Device: device, Declined: fmt.Sprintf("the nearest shape tuned, %s, is too far from this one to advise it", shape)}, false
	}
	var winner, fastest *Record
	for i := range fit {
		r := &fit[i]
		if r.Device.Name != device || r.Shape != shape {
			continue
		}
		switch r.Kind {
		case KindWinner:
			winner = r
		case KindEval:
			if fastest == nil || r.Time.MedianUS < fastest.Time.MedianUS {
				fastest = r
			}
		}
	}
	pick := cmp.Or(winner, fastest)
	if pick == nil {
		return Choice{}, false
	}
	c := Choice{Configs: slices.Clone(pick.Configs), Source: "nearest", Shape: shape, Device: device}
	if dist == 0 {
		c.Source = "exact"
	}
	if q.Defaults != nil {
		defs := make([]string, len(q.Templates))
		found := make([]bool, len(q.Templates)) // a default measured
		type launchConfig struct {
			launch int
			config string
		}
		measured := map[launchConfig]bool{} // failed or not
		for _, r := range append(failed, fit...) {
			if r.Device.Name != device || r.Shape != shape || r.Kind != KindEval {
				continue
			}
			for i, cfg := range r.Configs {
				measured[launchConfig{i, CanonicalConfig(cfg)}] = true
			}
			if r.Time != nil && r.Default && r.Launch >= 0 && r.Launch < len(defs) {
				defs[r.Launch] = CanonicalConfig(r.Configs[r.Launch]) // the last search's
				found[r.Launch] = true
			}
		}
		for i, d := range defs {
			now := ""
			if i < len(q.Defaults) {
				now = CanonicalConfig(q.Defaults[i])
			}
			switch {
			case found[i] && d == now:
			case dist == 0 && (!found[i] || measured[launchConfig{i, now}]):
				// At the exact shape, a search that measured today's
				// default (or records too old to say) stands.
			case !found[i]:
				return Choice{Shape: shape, Device: device, Declined: fmt.Sprintf("the nearest shape tuned, %s, has no measurement of launch %d's default", shape, i)}, false
			case dist == 0:
				return Choice{Shape: shape, Device: device, Declined: fmt.Sprintf("tuned at this shape against another default (%s), and the heuristic's default now (%s) was not measured there: kgen tune measures it", d, now)}, false
			default:
				return Choice{Shape: shape, Device: device, Declined: fmt.Sprintf("at the nearest shape tuned, %s, the heuristic chose otherwise (%s)", shape, d)}, false
			}
		}
	}
	if pick.Time != nil {
		c.TimeUS = pick.Time.MedianUS
	}
	return c, true
}

// maxNearestDistance is the farthest (shapeDistance) a shape's records
// advise another shape from: sizes that differ by a factor of 4 in all,
// say 1000 and 4000 rows, or 64 and 128 of two sizes each. A winner's
// advantage at a shape comes from what that shape's launch spends its
// time on, which a shape much smaller or larger does not share: on the
// H200, with each tuned at its own shape only, max pools of 16 x 64 x
// 112 x 112 took 36.45 us with their default and 134.43 with the winner
// of a 1 x 1 x 5 x 4 pool (a launch that is all launch cost), a transpose
// of 4096 x 4096 f32 on triton:sm_90 39.39 and 91.36 with that of 3 x 7,
// and layernorm over rows of 768 10.93 and 20.67 with that of 3 rows of 5
// (testsuite/results/2026-11-28-h200-s31-second/).
var maxNearestDistance = math.Log(4)

// shapeDistance is how far apart two shapes are; dims one shape lacks
// count as 1.
func shapeDistance(a, b map[string]int64) float64 {
	d := 0.0
	for k, x := range a {
		d += math.Abs(math.Log(float64(1+x)) - math.Log(float64(1+b[k])))
	}
	for k, y := range b {
		if _, ok := a[k]; !ok {
			d += math.Log(float64(1 + y))
		}
	}
	return d
}
