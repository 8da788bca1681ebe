package lower

import (
	"maps"
	"slices"
	"strconv"

	"kgen.dev/kgen/ir"
)

// TuneSpace returns the parameter values a kernel's @tune attribute gives
// (`@tune(BM = [64, 128], STAGES = [3, 4])`), which replace those
// parameters' values in the tuning space of every launch whose template
// declares them, or nil without @tune. The frontend has checked the
// values (positive integers, each once); names no template declares (see
// ParamNames) are left out, and reported by the driver at their position.
func TuneSpace(k *ir.Kernel) map[string][]int64 {
	a := k.Attr("tune")
	if a == nil {
		return nil
	}
	declared := ParamNames()
	out := map[string][]int64{}
	for _, arg := range a.Args {
		if !slices.Contains(declared, arg.Key) {
			continue
		}
		for _, v := range arg.Values {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
				out[arg.Key] = append(out[arg.Key], n)
			}
		}
	}
	return out
}

// ParamNames lists every template's tuning parameters, sorted.
func ParamNames() []string {
	names := map[string]bool{}
	for _, t := range templates {
		for k := range t.Space() {
			names[k] = true
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// versioned is a template whose emitted code changed in a way that makes
// earlier timings of its configurations stale.
type versioned interface {
	Version() int
}

// TemplateVersion is t's version, 1 unless t says otherwise. Tuning
// records carry it: a template that bumps it (by declaring
// `Version() int`) no longer matches the records of its older code.
func TemplateVersion(t Template) int {
	if v, ok := t.(versioned); ok {
		return v.Version()
	}
	return 1
}
