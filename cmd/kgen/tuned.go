package main

import (
	"flag"
	"fmt"
	"io"

	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
	kgrt "kgen.dev/kgen/runtime"
	"kgen.dev/kgen/tune"
)

// tunedFlags are build's, test's and bench's flags that choose the
// tuning database and the GPU whose tuned configurations to use.
type tunedFlags struct {
	db     string
	device string
}

func (t *tunedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.db, "db", "", `the tuning database whose configurations to use (default: $KGEN_TUNE_DB, else kgen/tune.jsonl in the user's cache directory; "off": the heuristic defaults)`)
	fs.StringVar(&t.device, "device", "", `use configurations tuned on this GPU, e.g. "NVIDIA H100 80GB HBM3" (default: this machine's GPU 0, else any GPU of the target)`)
}

// open loads the database. The device is --device, else GPU 0 of this
// machine as the driver names it, else none: then records of any GPU of
// the target serve (the one with most records for the kernel). Notes on
// the configuration each instance takes go to notes when it is not nil.
func (t *tunedFlags) open(notes io.Writer) (*tunedConfigs, error) {
	path := t.db
	if path == "" {
		var err error
		if path, err = tune.DefaultPath(); err != nil {
			return nil, err
		}
	}
	if path == "off" {
		return nil, nil
	}
	recs, _, err := (&tune.DB{Path: path}).Load()
	if err != nil {
		return nil, fmt.Errorf("tuning database: %w", err)
	}
	device := t.device
	if device == "" {
		if devs, err := kgrt.Devices(); err == nil && len(devs) > 0 {
			device = devs[0].Name
		}
	}
	return &tunedConfigs{recs: recs, device: device, notes: notes}, nil
}

// tunedConfigs are the configurations of a tuning database, for plans.
type tunedConfigs struct {
	recs   []tune.Record
	device string
	notes  io.Writer
}

// apply sets the launches of p (instance name of kernel k at env) to the
// configurations the database advises for target tgt (tune.Lookup: the
// exact shape, else the nearest shape recorded, on the device) and says
// which it used: "tuned", "nearest" or "default", with why.
func (t *tunedConfigs) apply(p *lower.Plan, k *ir.Kernel, env *ir.Env, tgt kgrt.Target) string {
	var tmpl []string
	defaults := make([]lower.Config, len(p.Launches))
	for i, l := range p.Launches {
		tmpl = append(tmpl, fmt.Sprintf("%s@%d", l.Template.Name(), lower.TemplateVersion(l.Template)))
		defaults[i] = l.Config
	}
	where := t.device
	if where == "" {
		where = "any GPU of " + tgt.String()
	}
	note := func(s string) string {
		if t.notes != nil {
			fmt.Fprintf(t.notes, "kgen: %s: %s\n", p.Name, s)
		}
		return s
	}
	keys := make([]string, len(defaults))
	for i, c := range defaults {
		keys[i] = tune.Key(c)
	}
	c, ok := tune.Lookup(t.recs, tune.Query{Hash: ir.Hash(k), Dims: envDims(env), Target: tgt.String(), Templates: tmpl, Device: t.device, Defaults: keys})
	if !ok && c.Declined != "" {
		return note(fmt.Sprintf("default: the heuristic configuration (%s)", c.Declined))
	}
	if !ok {
		return note(fmt.Sprintf("default: the heuristic configuration (no tuning record for %s on %s)", k.Name, where))
	}
	lim := tgt.Limits()
	for i, l := range p.Launches {
		cfg, err := tune.ParseConfig(c.Configs[i])
		if err == nil {
			l.Config = cfg
			err = l.Check(lim)
		}
		if err != nil {
			for j, l := range p.Launches {
				l.Config = defaults[j]
			}
			return note(fmt.Sprintf("default: the heuristic configuration (the tuned one does not fit: %v)", err))
		}
	}
	src := "tuned at this shape"
	if c.Source == "nearest" {
		src = "nearest: tuned at " + c.Shape
	}
	return note(fmt.Sprintf("%s on %s (%.2f us there)", src, c.Device, c.TimeUS))
}
