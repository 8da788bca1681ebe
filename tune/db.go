package tune

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	kgrt "kgen.dev/kgen/runtime"
)

// Record is one line of the tuning database: an evaluation of one
// configuration of a plan (Kind "eval"), or the configuration a tuning
// run confirmed as the winner (Kind "winner").
type Record struct {
	Kind   string `json:"kind"`
	Kernel string `json:"kernel"`  // the instance's name, for people
	Hash   string `json:"ir_hash"` // ir.Hash of the kernel
	// Shape is the instance's sizes ("M=4096, N=4096, K=4096"), Dims
	// the same by name, for finding the nearest shape.
	Shape  string           `json:"shape"`
	Dims   map[string]int64 `json:"dims"`
	Device Device           `json:"device"`
	Target string           `json:"target"` // "cuda:sm_90a"
	// Toolchain is the compiler and its version, "nvcc 12.4.131".
	Toolchain string `json:"toolchain"`
	// Templates is each launch's template and its version,
	// "row-reduce@1", in launch order.
	Templates []string `json:"templates"`
	// Configs is each launch's configuration (Key's text), in launch
	// order: the record is of the whole plan, whose time it is.
	Configs []string `json:"configs"`
	// Launch is the launch whose space was searched.
	Launch  int  `json:"launch"`
	Default bool `json:"default,omitempty"` // Configs are the heuristic defaults
	// Time is the plan's time, when it did not fail.
	Time    *kgrt.Timing `json:"time,omitempty"`
	Failure string       `json:"failure,omitempty"` // a FailureKind's text
	Error   string       `json:"error,omitempty"`
	At      string       `json:"at"` // RFC 3339, UTC
	// A winner's Finalists are the configurations of its launch re-timed
	// with it (Key's text; the default among them when it ran), and
	// DefaultUS the default's median there (0 when it was not re-timed).
	Finalists []string `json:"finalists,omitempty"`
	DefaultUS float64  `json:"default_us,omitempty"`
}

// Device is the GPU a record was measured on.
type Device struct {
	Name   string `json:"name"`   // "NVIDIA H100 80GB HBM3"
	CC     string `json:"cc"`     // compute capability, "9.0"
	Driver int    `json:"driver"` // the CUDA version the driver supports, 12040
}

// Record kinds.
const (
	KindEval   = "eval"
	KindWinner = "winner"
)

// Key identifies what a record measured, At and the outcome aside: two
// records with the same key measured the same thing. Configurations are
// compared in their canonical form (CanonicalConfig). An evaluation is of
// the whole plan, whichever launch's search asked for it; a winner is of
// one launch's search, and the same configurations can win two (a later
// launch keeping its default after an earlier one's winner), each among
// its own finalists.
func (r Record) Key() string {
	kind := r.Kind
	if r.Kind == KindWinner {
		kind = fmt.Sprintf("%s@%d", r.Kind, r.Launch)
	}
	return strings.Join([]string{kind, r.Hash, r.Shape, r.Device.Name, r.Device.CC, fmt.Sprint(r.Device.Driver), r.Target, r.Toolchain,
		strings.Join(r.Templates, "+"), canonicalConfigs(r.Configs)}, "|")
}

// canonicalConfigs joins a record's launch configurations in canonical
// form.
func canonicalConfigs(configs []string) string {
	cs := make([]string, len(configs))
	for i, c := range configs {
		cs[i] = CanonicalConfig(c)
	}
	return strings.Join(cs, "; ")
}

// DB is a tuning database: a file of JSON lines, one Record each, only
// ever appended to. Each record is one write of one line to a file opened
// with O_APPEND, under an exclusive lock of the file, so that concurrent
// processes interleave whole lines. A process killed mid-write leaves a
// torn last line, which Load skips and the next Append ends with a
// newline before writing, so that it never corrupts a later record.
type DB struct {
	Path string
}

// DefaultPath is the database the commands use without --db: the
// environment's KGEN_TUNE_DB when set (as GOCACHE is for go; "off" for
// none), else kgen/tune.jsonl under the user's cache directory.
func DefaultPath() (string, error) {
	if p := os.Getenv("KGEN_TUNE_DB"); p != "" {
		return p, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the tuning database (%v); give one with --db", err)
	}
	return filepath.Join(dir, "kgen", "tune.jsonl"), nil
}

// Append writes records to the database, one line each.
func (db *DB) Append(recs ...Record) error {
	if err := os.MkdirAll(filepath.Dir(db.Path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(db.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return fmt.Errorf("locking %s: %w", db.Path, err)
	}
	defer unlockFile(f)
	// A torn last line from a killed writer: end it, so that the next
	// record starts on a line of its own.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				return err
			}
		}
	}
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("writing %s: %w", db.Path, err)
		}
	}
	return nil
}

// Load reads every record. Lines that are not a whole record (a torn line
// from a killed process) are skipped and counted in bad. A missing file is
// an empty database.
func (db *DB) Load() (recs []Record, bad int, err error) {
	f, err := os.Open(db.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return ReadRecords(f)
}

// ReadRecords reads JSON lines of records from r, skipping and counting
// lines that are not whole records.
func ReadRecords(r io.Reader) (recs []Record, bad int, err error) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var rec Record
			if json.Unmarshal(line, &rec) == nil && rec.Kind != "" && rec.Hash != "" {
				recs = append(recs, rec)
			} else {
				bad++
			}
		}
		if err == io.EOF {
			return recs, bad, nil
		}
		if err != nil {
			return recs, bad, err
		}
	}
}

// Import appends the records of another database file (an --export from
// another machine) that this one lacks, and returns how many it added.
func (db *DB) Import(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	theirs, _, err := ReadRecords(f)
	if err != nil {
		return 0, err
	}
	ours, _, err := db.Load()
	if err != nil {
		return 0, err
	}
	have := map[string]bool{}
	for _, r := range ours {
		have[r.Key()+"|"+r.At] = true
	}
	var add []Record
	for _, r := range theirs {
		if k := r.Key() + "|" + r.At; !have[k] {
			have[k] = true
			add = append(add, r)
		}
	}
	return len(add), db.Append(add...)
}

// Latest returns, for each key, the last record with that key: what a
// run resumes from.
func Latest(recs []Record) map[string]Record {
	m := map[string]Record{}
	for _, r := range recs {
		m[r.Key()] = r
	}
	return m
}
