package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	kgrt "kgen.dev/kgen/runtime"
)

// reproduces reports whether spec s still fails with f's signature. It
// runs only what that class needs: the checker, then the failing stage.
func (c *checker) reproduces(s *Spec, f Failure) bool {
	dir, err := os.MkdirTemp(c.work, "min")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "m.kg")
	if os.WriteFile(path, []byte(s.Text()), 0o644) != nil {
		return false
	}
	same := func(got *Failure) bool { return got != nil && got.Signature() == f.Signature() }
	chk := c.stage(classCheck, "", "check", path)
	if f.Class == classCheck || chk != nil {
		return same(chk)
	}
	var got []Failure
	switch f.Class {
	case classEmulate, classInterp:
		// The interpreter must run for the comparison to mean anything.
		for _, q := range c.quick(path) {
			if q.Class == classEval || q.Class == classPanic {
				return false
			}
		}
		if f.Class == classEmulate {
			got = c.emulate([]string{path})[path]
		} else {
			got = c.interpret([]string{path})[path]
		}
	case classCompile:
		var only []kgrt.Target
		for _, t := range c.compilers {
			if t.String() == f.Target {
				only = append(only, t)
			}
		}
		got = c.compileFor([]string{path}, only)[path]
	default:
		got = c.quick(path)
		if f.Class == classPanic || f.Class == classTimeout {
			got = append(got, c.compile([]string{path})[path]...)
		}
	}
	return slices.ContainsFunc(got, func(g Failure) bool { return same(&g) })
}

// minimize shrinks s while it still fails with f, by greedy passes over
// candidate edits (delta debugging with single-step removal): drop a
// statement, an instance, an attribute; replace a subexpression with one
// of its operands or a literal; shrink a size. Every accepted candidate is
// cleaned of declarations nothing uses. It gives up after budget time.
func (c *checker) minimize(s *Spec, f Failure, budget time.Duration) (*Spec, int) {
	deadline := time.Now().Add(budget)
	cur := s.Clone()
	tries := 0
	for progress := true; progress && time.Now().Before(deadline); {
		progress = false
		for i := 0; ; i++ {
			cands := candidates(cur, f.Class)
			if i >= len(cands) || time.Now().After(deadline) {
				break
			}
			cand := cands[i]
			cand.cleanup()
			cand.fixRanges()
			if cand.Text() == cur.Text() {
				continue
			}
			tries++
			if c.reproduces(cand, f) {
				cur = cand
				progress = true
				i-- // the edit at i is gone; what follows shifted down
			}
		}
	}
	return cur, tries
}

// candidates lists the one-step simplifications of s, largest first.
func candidates(s *Spec, class string) []*Spec {
	var out []*Spec
	// Statements.
	for i := range s.K.Stmts {
		c := s.Clone()
		st := c.K.Stmts[i]
		c.K.Stmts = slices.Delete(c.K.Stmts, i, i+1)
		if !st.Let {
			c.K.Outputs = slices.DeleteFunc(c.K.Outputs, func(d Decl) bool { return d.Name == st.Name })
			if len(c.K.Outputs) == 0 {
				continue
			}
		}
		out = append(out, c)
	}
	// Instances: eval and check failures need one to show.
	minInstances := 0
	if class == classEval || class == classCheck {
		minInstances = 1
	}
	if len(s.Instances) > minInstances {
		for i := range s.Instances {
			c := s.Clone()
			c.Instances = slices.Delete(c.Instances, i, i+1)
			out = append(out, c)
		}
	}
	for i := range s.K.Attrs {
		c := s.Clone()
		c.K.Attrs = slices.Delete(c.K.Attrs, i, i+1)
		out = append(out, c)
	}
	// Subexpressions, outermost first.
	for si, st := range s.K.Stmts {
		var nodes []*Expr
		st.RHS.walk(func(e *Expr) { nodes = append(nodes, e) })
		for ni := range nodes {
			for _, alt := range alternatives(nodes[ni]) {
				c := s.Clone()
				var cn []*Expr
				c.K.Stmts[si].RHS.walk(func(e *Expr) { cn = append(cn, e) })
				*cn[ni] = *alt.Clone()
				out = append(out, c)
			}
		}
		// The whole right-hand side as a literal.
		c := s.Clone()
		c.K.Stmts[si].RHS = simplest(st.RHS.Kind)
		out = append(out, c)
	}
	// Sizes: 1, half, one less.
	for ii, in := range s.Instances {
		for bi, b := range in.Bindings {
			for _, v := range []int64{1, b.Value / 2, b.Value - 1} {
				if v >= 1 && v < b.Value {
					c := s.Clone()
					c.Instances[ii].Bindings[bi].Value = v
					out = append(out, c)
				}
			}
		}
	}
	// Inputs and outputs to f32, the plainest dtype.
	for i, d := range s.K.Inputs {
		if kindOf(d.DType) == kFloat && d.DType != "f32" {
			c := s.Clone()
			c.K.Inputs[i].DType = "f32"
			out = append(out, c)
		}
	}
	for i, d := range s.K.Outputs {
		if kindOf(d.DType) == kFloat && d.DType != "f32" {
			c := s.Clone()
			c.K.Outputs[i].DType = "f32"
			out = append(out, c)
		}
	}
	return out
}

// alternatives are the simpler expressions that may replace e: its
// operands of the same kind, the read without its padding, and a literal.
func alternatives(e *Expr) []*Expr {
	var out []*Expr
	if e.Op == "lit" || e.Op == "name" {
		return nil
	}
	for _, a := range e.Args {
		if a.Kind == e.Kind && e.Op != "read" {
			out = append(out, a)
		}
	}
	if e.Op == "read" && e.Pad != nil {
		c := e.Clone()
		c.Pad = nil
		out = append(out, c)
	}
	if e.Op == "read" {
		// Simplify the index expressions one at a time to their operands.
		for i, a := range e.Args {
			if a.Op == "lit" || a.Op == "name" {
				continue
			}
			var leaves []*Expr
			a.walk(func(x *Expr) {
				if x.Op == "name" && len(x.Text) <= 2 && strings.ToLower(x.Text) == x.Text {
					leaves = append(leaves, x)
				}
			})
			for _, l := range leaves {
				c := e.Clone()
				c.Args[i] = l.Clone()
				out = append(out, c)
			}
		}
	}
	if e.Op != "read" || e.Pad == nil {
		out = append(out, simplest(e.Kind))
	}
	return out
}

func simplest(kind byte) *Expr {
	switch kind {
	case kInt:
		return lit("1", kInt)
	case kBool:
		return lit("true", kBool)
	}
	return lit("1.5", kFloat)
}

var word = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// cleanup removes the declarations that nothing refers to any more:
// inputs, params, fns, derived dims and dims, repeating until none is
// left, and drops their instance bindings.
func (s *Spec) cleanup() {
	for changed := true; changed; {
		changed = false
		uses := map[string]int{}
		count := func(text string) {
			for _, w := range word.FindAllString(text, -1) {
				uses[w]++
			}
		}
		for _, st := range s.K.Stmts {
			count(strings.Join(st.LHS, " "))
			count(st.RHS.String())
		}
		for _, d := range append(slices.Clone(s.K.Inputs), s.K.Outputs...) {
			count(strings.Join(d.Shape, " "))
		}
		for _, w := range s.K.Where {
			count(w.Expr)
		}
		for _, f := range s.Fns {
			count(f.Body)
		}
		n := len(s.K.Inputs) + len(s.K.Params) + len(s.Fns) + len(s.K.Where) + len(s.K.Dims)
		s.K.Inputs = slices.DeleteFunc(s.K.Inputs, func(d Decl) bool { return uses[d.Name] == 0 })
		s.K.Params = slices.DeleteFunc(s.K.Params, func(p Param) bool { return uses[p.Name] == 0 })
		s.Fns = slices.DeleteFunc(s.Fns, func(f Fn) bool { return uses[f.Name] == 0 })
		s.K.Where = slices.DeleteFunc(s.K.Where, func(w Derived) bool { return uses[w.Name] == 0 })
		s.K.Dims = slices.DeleteFunc(s.K.Dims, func(d string) bool { return uses[d] == 0 })
		for i := range s.Instances {
			s.Instances[i].Bindings = slices.DeleteFunc(s.Instances[i].Bindings, func(b Binding) bool {
				return !slices.Contains(s.K.Dims, b.Name) && !slices.ContainsFunc(s.K.Params, func(p Param) bool { return p.Name == b.Name })
			})
		}
		changed = n != len(s.K.Inputs)+len(s.K.Params)+len(s.Fns)+len(s.K.Where)+len(s.K.Dims)
	}
}

// reproducer renders a minimized spec with a header that says what failed
// and how it was found; known marks it as a failure not yet fixed. dist,
// when not "", is the distribution of the inputs that failed ("inputs:
// DIST", which backends/cuda's TestEmulatedCorpus emulates it on).
func reproducer(s *Spec, f Failure, origin, dist string, fromLines int, known bool) string {
	c := s.Clone()
	target := ""
	if f.Target != "" {
		target = " on " + f.Target
	}
	c.Header = []string{
		fmt.Sprintf("difftest reproducer: %s failure%s (%s)", f.Class, target, messageKind(f.Detail)),
		fmt.Sprintf("found by %s; minimized from %d lines", origin, fromLines),
		"failing check: " + f.Stage,
	}
	if dist != "" {
		c.Header = append(c.Header, "inputs: "+dist)
	}
	for _, l := range strings.Split(excerpt(f.Detail, 8), "\n") {
		c.Header = append(c.Header, "  "+l)
	}
	if known {
		c.Header = append(c.Header, "", fmt.Sprintf("known-failure: %s %s", f.Class, f.Target))
	}
	return c.Text()
}
