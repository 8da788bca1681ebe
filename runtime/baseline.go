package runtime

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"

	"kgen.dev/kgen/ir"
)

// baselineScript times PyTorch programs for the example kernels with the
// runner's timing protocol (see its doc comment).
//
//go:embed baseline/baseline.py
var baselineScript []byte

// BaselineTask is one PyTorch program to time: the program of Kernel (by
// name) on random inputs of the given dtypes and shapes. The program is
// baseline.py's hand-written one for Kernel when it has one, else Fn of
// the module kgen emitted (backends/torch) at Sizes.
type BaselineTask struct {
	Name   string          `json:"name"`
	Kernel string          `json:"kernel"`
	Inputs []BaselineInput `json:"inputs"`
	Params map[string]any  `json:"params,omitempty"` // ParamValue of each param
	Module string          `json:"module,omitempty"`
	// Reference is the spec's own reference module (STEM.torch.py beside
	// STEM.kg), whose function named Kernel, when there is one, is the
	// program timed.
	Reference string           `json:"reference,omitempty"`
	Fn        string           `json:"fn,omitempty"`
	Sizes     map[string]int64 `json:"sizes,omitempty"`
	// Keywords names Fn's keyword argument of each param (Params are by
	// the spec's names, which the hand-written programs use).
	Keywords map[string]string `json:"keywords,omitempty"`
	// CheckInputs, when set, are raw little-endian files of the inputs (in
	// order) that the emitted program runs on once, writing each output's
	// raw bytes to the file of CheckOutputs: the PyTorch oracle.
	CheckInputs  []string `json:"check_inputs,omitempty"`
	CheckOutputs []string `json:"check_outputs,omitempty"`
	// Contraction marks a task with a matrix product, the only ones
	// max-autotune times.
	Contraction bool `json:"contraction,omitempty"`
	// CheckReference checks Reference's program instead of the emitted
	// one (to test the reference programs themselves).
	CheckReference bool `json:"check_reference,omitempty"`
}

// BaselineInput is one input tensor of a BaselineTask.
type BaselineInput struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// BaselineResult is one task's timings in each mode asked for, or why
// there are none (Skip), and why its check did not run (CheckError).
type BaselineResult struct {
	Name    string `json:"name"`
	Torch   string `json:"torch"`
	Program string `json:"program,omitempty"` // "hand-written" or "kgen's torch program"
	// Timings holds the timing of each mode (BaselineModes) that ran.
	Timings    map[string]*BaselineTiming `json:"timings,omitempty"`
	Skip       string                     `json:"skip,omitempty"`
	CheckError string                     `json:"check_error,omitempty"`
}

// BaselineTiming is a PyTorch program's time per run, with the runner's
// protocol.
type BaselineTiming struct {
	MedianUS float64 `json:"median_us"`
	P20US    float64 `json:"p20_us"`
	P80US    float64 `json:"p80_us"`
	Reps     int     `json:"reps"`
	Batch    int     `json:"batch"`
}

// BaselineModes are the ways PyTorch programs can be run: eager,
// torch.compile in its default mode, and torch.compile's max-autotune
// mode, which is timed only for tasks with a Contraction (it autotunes
// matrix-product kernels, for minutes).
var BaselineModes = []string{"eager", "compile", "max-autotune"}

// RunBaselines times tasks in PyTorch on GPU 0 with python (which must
// import torch), in each of modes (BaselineModes), using spec's protocol
// parameters (defaults as for Time; flushBytes is the L2 flush size).
func RunBaselines(ctx context.Context, python string, tasks []BaselineTask, modes []string, spec TimeSpec, flushBytes int64) ([]BaselineResult, error) {
	if err := CheckFlush(spec.Flush); err != nil {
		return nil, err
	}
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
		"min_ms": orDefault(spec.MinMS, DefaultMinMS), "flush_bytes": flushBytes, "flush": orFlush(spec.Flush), "tasks": tasks, "modes": modes,
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

// ParamValue is a param's value as a baseline task carries it: a JSON
// number, or for an infinite or NaN float (which JSON lacks) the string
// Python's float() reads: "inf", "-inf", "nan".
func ParamValue(c *ir.Const) any {
	switch {
	case !c.T.IsFloat():
		return c.I
	case math.IsNaN(c.F):
		return "nan"
	case math.IsInf(c.F, 1):
		return "inf"
	case math.IsInf(c.F, -1):
		return "-inf"
	}
	return c.F
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
