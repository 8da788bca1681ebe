package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"kgen.dev/kgen/tune"
)

// progressPrinter shows a tuning run's progress: on a terminal, one line
// rewritten in place; elsewhere (a log, CI) a plain line per evaluation.
type progressPrinter struct {
	w     io.Writer
	tty   bool
	quiet bool // --json prints its own lines
	what  string
	last  string
	// With several GPUs, each has a printer of plain lines that start
	// with its GPU's index and are written under mu.
	prefix string
	mu     *sync.Mutex
}

// newProgressPrinter prints to w; a terminal is recognized by w being a
// character device, which needs no terminal library.
func newProgressPrinter(w io.Writer, quiet bool) *progressPrinter {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb" {
			tty = true
		}
	}
	return &progressPrinter{w: w, tty: tty, quiet: quiet}
}

// forGPU is a printer for one of several GPUs' runs, sharing p's writer
// under mu: plain lines, "tune: gpu 1: ...".
func (p *progressPrinter) forGPU(gpu int, mu *sync.Mutex) *progressPrinter {
	return &progressPrinter{w: p.w, quiet: p.quiet, prefix: fmt.Sprintf("gpu %d: ", gpu), mu: mu}
}

// line prints "tune: " and the GPU's prefix, then the formatted line, on
// a line of its own.
func (p *progressPrinter) line(format string, args ...any) {
	if p.mu != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
	}
	if p.tty && p.last != "" {
		fmt.Fprintln(p.w)
		p.last = ""
	}
	fmt.Fprintf(p.w, "tune: %s%s\n", p.prefix, fmt.Sprintf(format, args...))
}

func (p *progressPrinter) begin(what string) {
	p.what = what
	if !p.quiet {
		p.line("%s", what)
	}
}

func (p *progressPrinter) update(pr tune.Progress) {
	if p.quiet {
		return
	}
	line := progressLine(pr)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.last = line
		return
	}
	p.line("%s: %s [%s]", p.what, line, pr.Last)
}

func (p *progressPrinter) end() {
	if p.tty && p.last != "" && !p.quiet {
		fmt.Fprintln(p.w)
		p.last = ""
	}
}

// progressLine is "37/200 evaluated, 3 failed; best 123.4 us (1.31x the
// default) BM=128, ...; 1m20s left".
func progressLine(pr tune.Progress) string {
	var b strings.Builder
	if pr.Total > 0 {
		fmt.Fprintf(&b, "%d/%d evaluated", pr.Done, pr.Total)
	} else {
		fmt.Fprintf(&b, "%d evaluated", pr.Done)
	}
	fmt.Fprintf(&b, ", %d failed", pr.Failed)
	if pr.Best != nil {
		fmt.Fprintf(&b, "; best %.2f us", pr.Best.Time.MedianUS)
		if pr.DefaultUS > 0 {
			fmt.Fprintf(&b, " (%.2fx the default)", pr.DefaultUS/pr.Best.Time.MedianUS)
		}
		fmt.Fprintf(&b, " %s", tune.Key(pr.Best.Config))
	}
	if eta := pr.ETA.Round(time.Second); eta > 0 {
		fmt.Fprintf(&b, "; %s left", eta)
	}
	return b.String()
}

// printEvalJSON prints one evaluation as a JSON line for --json.
func printEvalJSON(instance string, launch int, pr tune.Progress) {
	r := pr.Last
	ev := map[string]any{"event": "eval", "instance": instance, "launch": launch, "config": tune.Key(r.Config), "cached": r.Cached,
		"done": pr.Done, "failed": pr.Failed}
	if r.Failure != nil {
		ev["failure"], ev["error"] = r.Failure.Kind.String(), r.Failure.Error()
	} else {
		ev["time"] = r.Time
	}
	if pr.Best != nil {
		ev["best_us"], ev["best_config"] = pr.Best.Time.MedianUS, tune.Key(pr.Best.Config)
	}
	line, _ := json.Marshal(ev)
	fmt.Fprintln(stdout, string(line))
}

// printSummaries prints the tuned instances as a table; with several
// GPUs (gpus), the GPU of each is its last column (named in the error of
// an instance that failed, which is its row's last cell).
func printSummaries(w io.Writer, dev tune.Device, toolchain string, sums []tuneSummary, gpus bool) {
	fmt.Fprintf(w, "%s (compute capability %s, CUDA driver %d.%d), %s\n", dev.Name, dev.CC, dev.Driver/1000, dev.Driver%1000/10, toolchain)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "instance\ttemplates\tdefault us\ttuned us\tspeedup\tevaluated (measured)\tfailed\tseconds\tconfig"
	if gpus {
		head += "\tgpu"
	}
	fmt.Fprintln(tw, head)
	for _, s := range sums {
		if s.Error != "" {
			what := "error"
			if gpus {
				what = fmt.Sprintf("error on GPU %d", s.GPU)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s: %s\n", s.Instance, strings.Join(s.Templates, "+"), what, s.Error)
			continue
		}
		gpu := ""
		if gpus {
			gpu = fmt.Sprintf("\t%d", s.GPU)
		}
		var fails []string
		for _, k := range slices.Sorted(maps.Keys(s.Failures)) {
			fails = append(fails, fmt.Sprintf("%d %s", s.Failures[k], k))
		}
		speed := "-"
		if s.Speedup > 0 {
			speed = fmt.Sprintf("%.2fx", s.Speedup)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%s\t%d (%d)\t%s\t%.0f\t%s%s\n", s.Instance, strings.Join(s.Templates, "+"), s.DefaultUS, s.TunedUS,
			speed, s.Evals, s.Measured, strings.Join(fails, ", "), s.Seconds, strings.Join(s.Configs, " | "), gpu)
	}
	tw.Flush()
}

// simulateDB replays the database's measured spaces with every strategy.
func simulateDB(db *tune.DB, want []string, seeds, batch, budget int, scratch, asJSON bool) int {
	if seeds < 1 || batch < 1 {
		return usageError("tune", "--seeds and --batch must be at least 1")
	}
	recs, _, err := db.Load()
	if err != nil {
		fmt.Fprintf(stderr, "kgen tune: %v\n", err)
		return exitUser
	}
	recs = slices.DeleteFunc(recs, func(r tune.Record) bool { return want != nil && !slices.Contains(want, r.Kernel) })
	tables := tune.Tables(recs)
	if len(tables) == 0 {
		fmt.Fprintf(stderr, "kgen tune: --simulate: %s holds no measured spaces%s; run kgen tune --strategy exhaustive first\n", db.Path, kernelsNote(want))
		return exitUser
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	if !asJSON {
		from := "the default configuration first"
		if scratch {
			from = "without the default configuration"
		}
		fmt.Fprintf(stdout, "evaluations to come within %.0f%% of the best, mean over %d seeds (seeds that got there), batches of %d, %s\n", 100*tune.Within, seeds, batch, from)
		fmt.Fprintf(tw, "space\tconfigs\tbest us\t%s\n", strings.Join(tune.Strategies, "\t"))
	}
	for _, t := range tables {
		row := []string{t.Name, fmt.Sprint(len(t.Costs)), fmt.Sprintf("%.2f", t.Best())}
		results := map[string]tune.SimResult{}
		for _, name := range tune.Strategies {
			r, err := tune.Simulate(t, name, seeds, batch, budget, scratch)
			if err != nil {
				fmt.Fprintf(stderr, "kgen tune: %v\n", err)
				return exitUser
			}
			results[name] = r
			row = append(row, fmt.Sprintf("%.1f (%d)", r.Mean, r.Reached))
		}
		if asJSON {
			line, _ := json.Marshal(map[string]any{"space": t.Name, "configs": len(t.Costs), "best_us": t.Best(), "seeds": seeds, "batch": batch, "scratch": scratch, "within": tune.Within, "strategies": results})
			fmt.Fprintln(stdout, string(line))
		} else {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	}
	tw.Flush()
	return exitOK
}

func kernelsNote(want []string) string {
	if want == nil {
		return ""
	}
	return " of " + strings.Join(want, ", ")
}

// exportDB writes the database's records (of want's kernels) to path,
// whole or not at all.
func exportDB(db *tune.DB, want []string, path string) int {
	recs, _, err := db.Load()
	if err != nil {
		fmt.Fprintf(stderr, "kgen tune: %v\n", err)
		return exitUser
	}
	var b strings.Builder
	n := 0
	for _, r := range recs {
		if want != nil && !slices.Contains(want, r.Kernel) {
			continue
		}
		line, err := json.Marshal(r)
		if err != nil {
			fmt.Fprintf(stderr, "kgen tune: %v\n", err)
			return exitUser
		}
		b.Write(line)
		b.WriteByte('\n')
		n++
	}
	if err := writeFileAtomic(path, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintf(stderr, "kgen tune: --export: %v\n", err)
		return exitUser
	}
	fmt.Fprintf(stdout, "exported %d records to %s\n", n, path)
	return exitOK
}
