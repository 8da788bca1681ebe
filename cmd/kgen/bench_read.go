package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	kgrt "kgen.dev/kgen/runtime"
)

// readReport reads a report that kgen bench --json wrote. Reports written
// before the 2026-11-23 schema change (timings under Go field names,
// PyTorch eager's timing as "eager" and its speedup as "speedup_vs_eager"
// in each row, "nvcc" for the toolchain) are brought to the current one.
// Errors name the file, and the line and column when the JSON decoder
// gives a position.
func readReport(path string) (*benchReport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: error: cannot read the report: %v", path, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, jsonError(path, data, err)
	}
	if _, ok := top["rows"]; !ok {
		return nil, fmt.Errorf(`%s: error: not a kgen bench report: it has no "rows"`, path)
	}
	var rep benchReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, jsonError(path, data, err)
	}
	var legacy struct {
		Nvcc string `json:"nvcc"`
		Rows []struct {
			Time struct {
				MedianUS float64 `json:"MedianUS"`
				P20US    float64 `json:"P20US"`
				P80US    float64 `json:"P80US"`
			} `json:"time"`
			Eager          *kgrt.BaselineTiming `json:"eager"`
			SpeedupVsEager float64              `json:"speedup_vs_eager"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(data, &legacy); err != nil {
		return nil, jsonError(path, data, err)
	}
	if rep.Toolchain == "" && legacy.Nvcc != "" {
		rep.Toolchain = "nvcc " + legacy.Nvcc
	}
	for i := range rep.Rows {
		r, l := &rep.Rows[i], legacy.Rows[i]
		if r.Name == "" {
			return nil, fmt.Errorf("%s: error: not a kgen bench report: row %d has no name", path, i+1)
		}
		if r.Time.MedianUS == 0 {
			r.Time.MedianUS, r.Time.P20US, r.Time.P80US = l.Time.MedianUS, l.Time.P20US, l.Time.P80US
		}
		if r.Torch == nil && l.Eager != nil {
			r.Torch = &kgrt.BaselineResult{Name: r.Name, Timings: map[string]*kgrt.BaselineTiming{"eager": l.Eager}}
			if l.SpeedupVsEager > 0 {
				r.Speedups = map[string]float64{"eager": l.SpeedupVsEager}
			}
			if !slices.Contains(rep.Baselines, "eager") {
				rep.Baselines = append(rep.Baselines, "eager")
			}
		}
	}
	return &rep, nil
}

// jsonError words a decoding error of path's data, at its position.
func jsonError(path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := position(data, syn.Offset)
		return fmt.Errorf("%s:%d:%d: error: invalid JSON: %v", path, line, col, syn)
	case errors.As(err, &typ):
		line, col := position(data, valueStart(data, typ.Offset)+1)
		what := "the report"
		if typ.Field != "" {
			what = typ.Field
		}
		return fmt.Errorf("%s:%d:%d: error: not a kgen bench report: %s should be %s, not %s", path, line, col, what, jsonKind(typ.Type), article(typ.Value))
	}
	return fmt.Errorf("%s: error: invalid JSON: %v", path, err)
}

// position is the line and column (from 1, in bytes) of the byte before
// offset: the decoder's offsets count the bytes read when it failed.
func position(data []byte, offset int64) (line, col int) {
	at := int(min(max(offset-1, 0), int64(len(data))))
	line = 1 + strings.Count(string(data[:at]), "\n")
	return line, at - strings.LastIndexByte(string(data[:at]), '\n')
}

// valueStart is where the JSON value that ends at offset begins: the
// decoder gives the offset after a string, number or literal of the wrong
// type, and after the first byte of an array or object.
func valueStart(data []byte, offset int64) int64 {
	i := min(max(offset-1, 0), int64(len(data)-1))
	if i < 0 {
		return 0
	}
	if data[i] == '"' {
		for i--; i >= 0; i-- {
			backslashes := 0
			for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
				backslashes++
			}
			if data[i] == '"' && backslashes%2 == 0 {
				return i
			}
		}
		return 0
	}
	for i > 0 && strings.IndexByte("0123456789+-.eEtrufalsn", data[i-1]) >= 0 {
		i--
	}
	return i
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	}
	return "a number"
}

func article(value string) string {
	if value == "" {
		return "that"
	}
	if strings.IndexByte("aeiou", value[0]) >= 0 {
		return "an " + value
	}
	return "a " + value
}
