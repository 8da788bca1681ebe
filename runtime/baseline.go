package runtime

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// baselineScript times PyTorch programs for the example kernels with the
// runner's timing protocol (see its doc comment).
//
//go:embed baseline/baseline.py
var baselineScript []byte

// BaselineTask is one PyTorch program to time: the program of Kernel (by
// name) on random inputs of the given dtypes and shapes.
type BaselineTask struct {
	Name   string             `json:"name"`
	Kernel string             `json:"kernel"`
	Inputs []BaselineInput    `json:"inputs"`
	Params map[string]float64 `json:"params,omitempty"`
}

// BaselineInput is one input tensor of a BaselineTask.
type BaselineInput struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// BaselineResult is the timing of one task, or why there is none (Skip).
type BaselineResult struct {
	Name     string  `json:"name"`
	Torch    string  `json:"torch"`
	MedianUS float64 `json:"median_us"`
	P20US    float64 `json:"p20_us"`
	P80US    float64 `json:"p80_us"`
	Reps     int     `json:"reps"`
	Batch    int     `json:"batch"`
	Skip     string  `json:"skip,omitempty"`
}

// RunBaselines times tasks in PyTorch eager mode on GPU 0 with python
// (which must import torch), using spec's protocol parameters (defaults
// as for Time; flushBytes is the L2 flush size).
func RunBaselines(ctx context.Context, python string, tasks []BaselineTask, spec TimeSpec, flushBytes int64) ([]BaselineResult, error) {
	dir, err := os.MkdirTemp("", "kgen-baseline-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "baseline.py")
	if err := os.WriteFile(script, baselineScript, 0o644); err != nil {
		return nil, err
	}
	job := map[string]any{
		"warmup_ms": orDefault(spec.WarmupMS, DefaultWarmupMS), "min_reps": int(orDefault(float64(spec.MinReps), DefaultMinReps)),
		"min_ms": orDefault(spec.MinMS, DefaultMinMS), "flush_bytes": flushBytes, "tasks": tasks,
	}
	in, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, python, script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("baseline: %s: %v\n%s", python, err, tail(stderr.String(), 2000))
	}
	var res []BaselineResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r BaselineResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("baseline: bad output line %q: %v", sc.Text(), err)
		}
		res = append(res, r)
	}
	if len(res) != len(tasks) {
		return nil, fmt.Errorf("baseline: %d results for %d tasks\n%s", len(res), len(tasks), tail(stderr.String(), 2000))
	}
	return res, nil
}

func orDefault(v, d float64) float64 {
	if v <= 0 {
		return d
	}
	return v
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
