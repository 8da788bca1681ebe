// Package tune searches the configurations of a plan's launches for the
// fastest: the space of a launch (space.go), strategies that choose what to
// measure next (strategy.go and its neighbours), the loop that compiles
// candidates in parallel and measures them one at a time (loop.go), the
// winner's confirmation (confirm.go), the tuning database that remembers
// every evaluation (db.go), and the replay of a measured space to compare
// strategies without a GPU (simulate.go).
package tune

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"kgen.dev/kgen/lower"
)

// Param is one tuning parameter and its candidate values, ascending.
type Param struct {
	Name   string
	Values []int64
}

// Space is the configurations of one launch: the product of its
// parameters' values (a mixed-radix number whose digits are value
// indices, the last parameter varying fastest), of which Valid accepts
// those that the template's constraints and the target's limits allow.
// Nothing is materialized: a configuration is its index.
type Space struct {
	Params []Param // sorted by name
	// Valid reports why a configuration cannot run, or nil. Nil Valid
	// accepts every configuration.
	Valid func(lower.Config) error
}

// Size is the number of points of the product, valid or not.
func (s *Space) Size() int64 {
	n := int64(1)
	for _, p := range s.Params {
		n *= int64(len(p.Values))
	}
	return n
}

// Digits returns the value index of each parameter at point i.
func (s *Space) Digits(i int64) []int {
	d := make([]int, len(s.Params))
	for j := len(s.Params) - 1; j >= 0; j-- {
		n := int64(len(s.Params[j].Values))
		d[j] = int(i % n)
		i /= n
	}
	return d
}

// Index is the point whose value indices are d.
func (s *Space) Index(d []int) int64 {
	var i int64
	for j, p := range s.Params {
		i = i*int64(len(p.Values)) + int64(d[j])
	}
	return i
}

// Config is the configuration at point i.
func (s *Space) Config(i int64) lower.Config {
	c := lower.Config{}
	for j, d := range s.Digits(i) {
		c[s.Params[j].Name] = s.Params[j].Values[d]
	}
	return c
}

// IndexOf is the point of configuration c, or false when one of c's
// values is not in the space (or c lacks a parameter).
func (s *Space) IndexOf(c lower.Config) (int64, bool) {
	d := make([]int, len(s.Params))
	for j, p := range s.Params {
		v, ok := c[p.Name]
		if !ok {
			return 0, false
		}
		k := slices.Index(p.Values, v)
		if k < 0 {
			return 0, false
		}
		d[j] = k
	}
	return s.Index(d), true
}

// Check reports why point i cannot run, or nil.
func (s *Space) Check(i int64) error {
	if s.Valid == nil {
		return nil
	}
	return s.Valid(s.Config(i))
}

// Count counts the valid points by visiting every one: for tests and
// --dry-run on spaces of modest size.
func (s *Space) Count() int64 {
	var n int64
	for i := range s.Size() {
		if s.Check(i) == nil {
			n++
		}
	}
	return n
}

// LaunchSpace is the space of launch l of a plan for a target with limits
// lim: the template's declared parameters, with the values of narrow
// (from a kernel's @tune) replacing a parameter's, filtered by the
// template's constraints and the limits (Launch.Check). Values outside the
// template's declared space are allowed: @tune may extend a space, and a
// value the template cannot build fails as a candidate, not as the tuner.
func LaunchSpace(l *lower.Launch, lim lower.Limits, narrow map[string][]int64) *Space {
	declared := l.Template.Space()
	maps.Copy(declared, narrow)
	s := &Space{}
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		if _, ok := l.Template.Space()[name]; !ok {
			continue // a @tune parameter of another template
		}
		vals := slices.Clone(declared[name])
		slices.Sort(vals)
		s.Params = append(s.Params, Param{Name: name, Values: slices.Compact(vals)})
	}
	probe := *l
	s.Valid = func(c lower.Config) error {
		p := probe
		p.Config = c
		return p.Check(lim)
	}
	return s
}

// Key is the canonical text of a configuration: "BK=32, BM=128".
func Key(c lower.Config) string { return c.String() }

// CanonicalConfig is a configuration's text (Key's form) less the
// parameters at their implicit value (lower.Config.WithoutImplicit), so
// that a tuning record written before its template gained a parameter
// (row-reduce's BLOCKS_PER_SM) still answers for the parameter's implicit
// value. Text that is no configuration it returns as it is.
func CanonicalConfig(s string) string {
	c, err := ParseConfig(s)
	if err != nil {
		return s
	}
	return Key(c.WithoutImplicit())
}

// ParseConfig reads a configuration written as Key writes it.
func ParseConfig(s string) (lower.Config, error) {
	c := lower.Config{}
	if strings.TrimSpace(s) == "" {
		return c, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		var v int64
		if _, err := fmt.Sscan(val, &v); !ok || err != nil {
			return nil, fmt.Errorf("bad configuration %q: want NAME=INT, ...", s)
		}
		c[name] = v
	}
	return c, nil
}
