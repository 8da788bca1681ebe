package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	kgrt "kgen.dev/kgen/runtime"
)

// A portability run of every example on every target takes longer than
// some GPU machines lend at a time; kgen test --merge-matrix joins runs
// of parts of the files (or of the targets) into one matrix.

// portPart is one run that a merged matrix joins.
type portPart struct {
	Date     string      `json:"date"`
	GPU      string      `json:"gpu,omitempty"`
	Files    []string    `json:"files"`
	CopyGBps float64     `json:"copy_gbps,omitempty"`
	Peaks    []kgrt.Peak `json:"matrix_peaks,omitempty"`
	NotRun   []string    `json:"not_run,omitempty"`  // the files it was stopped before
	Replaced []string    `json:"replaced,omitempty"` // files whose cells a later run's replaced
}

// parts lists the runs m was measured in: its Parts when merged, else
// itself.
func (m *portMatrix) parts() []portPart {
	if len(m.Parts) > 0 {
		return m.Parts
	}
	p := portPart{Date: m.Date, GPU: m.GPU, CopyGBps: m.CopyGBps, Peaks: m.Peaks, NotRun: m.NotRun}
	for _, f := range m.Files {
		p.Files = append(p.Files, f.File)
	}
	return []portPart{p}
}

// readMatrix reads a matrix that kgen test --matrix-json wrote.
func readMatrix(path string) (*portMatrix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m portMatrix
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: error: not a portability matrix: %v", path, err)
	}
	if len(m.Targets) == 0 {
		return nil, fmt.Errorf(`%s: error: not a portability matrix: it has no "targets"`, path)
	}
	return &m, nil
}

// mergeMatrices joins the matrices of paths: the union of their targets,
// files and instances, each cell from the one run that has it. A file on
// a target in two single runs of different dates comes from the later
// (a rerun after a fix), and the earlier run's part names it as replaced;
// in two runs of one date, or where either is itself a merged matrix, it
// is an error, as is another GPU or another toolchain for a target that
// both built. The date is the earliest run's, the copy bandwidth and each
// probe's peak the lowest of the runs' (each cell keeps its own run's
// fractions).
func mergeMatrices(paths []string) (*portMatrix, error) {
	runs := make([]*portMatrix, len(paths))
	for i, path := range paths {
		r, err := readMatrix(path)
		if err != nil {
			return nil, err
		}
		runs[i] = r
	}
	// The run each file on each target comes from.
	from := map[string]int{}
	replaced := make([][]string, len(runs))
	for i, r := range runs {
		for _, f := range r.Files {
			for _, t := range slices.Sorted(maps.Keys(f.Cells)) {
				key := f.File + " on " + t
				j, ok := from[key]
				if !ok {
					from[key] = i
					continue
				}
				o := runs[j]
				if r.Date == o.Date || len(r.Parts) > 0 || len(o.Parts) > 0 {
					return nil, fmt.Errorf("%s: error: %s is also in %s: each file and target may come from one run only, or from the later of two single runs", paths[i], key, paths[j])
				}
				older := i
				if r.Date > o.Date {
					from[key], older = i, j
				}
				if !slices.Contains(replaced[older], f.File) {
					replaced[older] = append(replaced[older], f.File)
				}
			}
		}
	}
	var m *portMatrix
	for i, r := range runs {
		path := paths[i]
		if m == nil {
			m = &portMatrix{Date: r.Date, GPU: r.GPU, CopyGBps: r.CopyGBps}
		}
		if r.GPU != "" && m.GPU != "" && r.GPU != m.GPU {
			return nil, fmt.Errorf("%s: error: measured on %s, but %s on %s: merge matrices of one GPU", path, r.GPU, paths[0], m.GPU)
		}
		m.GPU = orText(m.GPU, r.GPU)
		for _, t := range r.Targets {
			i := slices.IndexFunc(m.Targets, func(o portTargetJS) bool { return o.Target == t.Target })
			// A target left out of one run (no toolchain there) may be
			// built in another: a GPU machine's run and a compile-only
			// run of the AMD targets.
			switch {
			case i < 0:
				m.Targets = append(m.Targets, t)
			case t.Skipped != "":
			case m.Targets[i].Skipped != "":
				m.Targets[i] = t
			case m.Targets[i].Toolchain != t.Toolchain:
				return nil, fmt.Errorf("%s: error: %s was built with %s, but with %s before: merge runs of one toolchain", path, t.Target, orText(t.Toolchain, "no toolchain"), orText(m.Targets[i].Toolchain, "no toolchain"))
			}
		}
		for _, f := range r.Files {
			k := slices.IndexFunc(m.Files, func(o portFile) bool { return o.File == f.File })
			if k < 0 {
				m.Files = append(m.Files, portFile{File: f.File, Cells: map[string]portCell{}})
				k = len(m.Files) - 1
			}
			for t, c := range f.Cells {
				if from[f.File+" on "+t] == i {
					m.Files[k].Cells[t] = c
				}
			}
		}
		for _, in := range r.Instances {
			k := slices.IndexFunc(m.Instances, func(o portInstance) bool { return o.File == in.File && o.Name == in.Name })
			if k < 0 {
				m.Instances = append(m.Instances, portInstance{Name: in.Name, File: in.File, Cells: map[string]portTime{}})
				k = len(m.Instances) - 1
			}
			for t, c := range in.Cells {
				if from[in.File+" on "+t] == i {
					m.Instances[k].Cells[t] = c
				}
			}
		}
		for _, p := range r.parts() {
			if len(r.Parts) == 0 {
				p.Replaced = replaced[i]
			}
			m.Parts = append(m.Parts, p)
			m.Date = min(m.Date, p.Date)
			if p.CopyGBps > 0 && (m.CopyGBps <= 0 || p.CopyGBps < m.CopyGBps) {
				m.CopyGBps = p.CopyGBps
			}
			m.Peaks = lowestPeaks(m.Peaks, p.Peaks)
		}
	}
	return m, nil
}
