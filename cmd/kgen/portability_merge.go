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
	NotRun   []string    `json:"not_run,omitempty"` // the files it was stopped before
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
// files and instances, each cell from the one run that has it (a cell in
// two runs is an error, as is another GPU or another toolchain for a
// target that both built). The date is the earliest run's, the copy bandwidth and each
// probe's peak the lowest of the runs' (each cell keeps its own run's
// fractions).
func mergeMatrices(paths []string) (*portMatrix, error) {
	var m *portMatrix
	fileFrom := map[string]string{} // file on target -> the run it came from
	for _, path := range paths {
		r, err := readMatrix(path)
		if err != nil {
			return nil, err
		}
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
			i := slices.IndexFunc(m.Files, func(o portFile) bool { return o.File == f.File })
			if i < 0 {
				m.Files = append(m.Files, portFile{File: f.File, Cells: map[string]portCell{}})
				i = len(m.Files) - 1
			}
			for _, t := range slices.Sorted(maps.Keys(f.Cells)) {
				c := f.Cells[t]
				key := f.File + " on " + t
				if from, ok := fileFrom[key]; ok {
					return nil, fmt.Errorf("%s: error: %s is also in %s: each file and target may come from one run only", path, key, from)
				}
				fileFrom[key] = path
				m.Files[i].Cells[t] = c
			}
		}
		for _, in := range r.Instances {
			i := slices.IndexFunc(m.Instances, func(o portInstance) bool { return o.File == in.File && o.Name == in.Name })
			if i < 0 {
				m.Instances = append(m.Instances, portInstance{Name: in.Name, File: in.File, Cells: map[string]portTime{}})
				i = len(m.Instances) - 1
			}
			for t, c := range in.Cells {
				m.Instances[i].Cells[t] = c // its file's cell was checked above
			}
		}
		for _, p := range r.parts() {
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
