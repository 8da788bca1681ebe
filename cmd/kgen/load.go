package main

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// loaded is one checked source file.
type loaded struct {
	path string
	file *frontend.File
	prog *ir.Program
}

// loadFiles parses and checks files, collecting their diagnostics. A file
// that cannot be read is a user error, reported like a diagnostic.
func loadFiles(paths []string, diags *diag.List) []*loaded {
	var out []*loaded
	for _, p := range paths {
		text, err := os.ReadFile(p)
		if err != nil {
			diags.Errorf(diag.Span{}, "%v", err)
			continue
		}
		src := diag.NewSource(p, string(text))
		f := frontend.Parse(src, diags)
		prog := frontend.Check(f, diags)
		checkTune(prog, diags)
		out = append(out, &loaded{path: p, file: f, prog: prog})
	}
	return out
}

// checkTune reports the @tune parameters that no template declares, at
// their names: the frontend checks the attribute's form, but the
// templates, and so the names, are lowering's.
func checkTune(prog *ir.Program, diags *diag.List) {
	if prog == nil {
		return
	}
	names := lower.ParamNames()
	for _, k := range prog.Kernels {
		a := k.Attr("tune")
		if a == nil {
			continue
		}
		for _, arg := range a.Args {
			if arg.Key != "" && !slices.Contains(names, arg.Key) {
				hint := ""
				if s := frontend.Suggest(arg.Key, names); s != "" {
					hint = fmt.Sprintf("did you mean %s? ", s)
				}
				diags.Errorf(arg.Span, "@tune: no template has a parameter %s; %stemplates' parameters: %s", arg.Key, hint, strings.Join(names, ", "))
			}
		}
	}
}

// report prints diagnostics sorted, as text or JSON lines, and returns the
// exit code they imply.
func report(diags *diag.List, asJSON bool) int {
	diags.Sort()
	if asJSON {
		if err := diags.PrintJSON(stderr); err != nil {
			fmt.Fprintf(stderr, "kgen: %v\n", err)
		}
	} else {
		diags.Print(stderr)
	}
	if diags.HasErrors() {
		return exitUser
	}
	return exitOK
}

// shapeFlag holds `--shape M=64,N=32,stride=2`.
type shapeFlag map[string]string

func (s *shapeFlag) String() string {
	var parts []string
	for k, v := range *s {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (s *shapeFlag) Set(v string) error {
	if *s == nil {
		*s = shapeFlag{}
	}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok || name == "" || val == "" {
			return fmt.Errorf("%q is not NAME=VALUE", part)
		}
		(*s)[name] = val
	}
	return nil
}

// bindShape binds a kernel's dims and params from --shape values, parsing
// each param value as its declared dtype.
func bindShape(k *ir.Kernel, shape shapeFlag) (*ir.Env, error) {
	dims := map[string]int64{}
	params := map[string]*ir.Const{}
	for name, val := range shape {
		var p *ir.Param
		for _, q := range k.Params {
			if q.Name == name {
				p = q
			}
		}
		if p == nil {
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("--shape %s=%s: a dim size must be an integer", name, val)
			}
			dims[name] = v
			continue
		}
		c, err := parseParam(p.Type, val)
		if err != nil {
			return nil, fmt.Errorf("--shape %s=%s: %v", name, val, err)
		}
		params[name] = c
	}
	return ir.Bind(k, dims, params)
}

func parseParam(t ir.DType, val string) (*ir.Const, error) {
	c := &ir.Const{T: t}
	switch {
	case t == ir.Bool:
		b, err := strconv.ParseBool(val)
		if err != nil {
			return nil, fmt.Errorf("param is bool; give true or false")
		}
		if b {
			c.I = 1
		}
	case t.IsFloat():
		f, err := strconv.ParseFloat(strings.Replace(val, "inf", "Inf", 1), 64)
		if err != nil {
			return nil, fmt.Errorf("param is %s; give a number", t)
		}
		c.F = f
	default:
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("param is %s; give an integer", t)
		}
		c.I = v
	}
	return c, nil
}

// findKernel resolves --kernel to a kernel or an instance of the loaded
// programs.
func findKernel(files []*loaded, name string) (*ir.Kernel, *ir.Instance, error) {
	var names []string
	for _, l := range files {
		if k := l.prog.Kernel(name); k != nil {
			return k, nil, nil
		}
		if in := l.prog.Instance(name); in != nil {
			return in.Kernel, in, nil
		}
		for _, k := range l.prog.Kernels {
			names = append(names, k.Name)
		}
		for _, in := range l.prog.Instances {
			names = append(names, in.Name)
		}
	}
	return nil, nil, fmt.Errorf("no kernel or instance %q (have: %s)%s", name, strings.Join(names, ", "), closest(name, names))
}

// configFlag is --config NAME=V,...: template parameters that replace the
// heuristic defaults on every launch whose template declares them all.
type configFlag lower.Config

func (c *configFlag) String() string { return lower.Config(*c).String() }

func (c *configFlag) Set(v string) error {
	var s shapeFlag
	if err := s.Set(v); err != nil {
		return err
	}
	if *c == nil {
		*c = configFlag{}
	}
	for k, val := range s {
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return fmt.Errorf("%s=%s: want an integer", k, val)
		}
		(*c)[k] = n
	}
	return nil
}

// declares reports whether the file declares an instance or a kernel
// named name.
func (l *loaded) declares(name string) bool {
	return slices.ContainsFunc(l.prog.Instances, func(in *ir.Instance) bool { return in.Name == name }) ||
		slices.ContainsFunc(l.prog.Kernels, func(k *ir.Kernel) bool { return k.Name == name })
}
