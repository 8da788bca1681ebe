package runtime

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// FuncResources is ptxas's resource report for one kernel (entry
// function), from `-Xptxas -v`.
type FuncResources struct {
	Name        string // the symbol: the spec's name for extern "C" kernels, mangled otherwise
	Registers   int    // 32-bit registers per thread
	Barriers    int    // named barriers (reported by nvcc 12 and newer; 0 otherwise)
	SpillStores int    // bytes
	SpillLoads  int    // bytes
	SharedBytes int    // static shared memory; dynamic shared memory is set at launch
	ConstBytes  int    // constant memory over all banks (kernel parameters are in cmem[0])
	StackBytes  int    // stack frame (local arrays and spills)
}

// String summarizes the report in one line, as shown in notes.
func (r FuncResources) String() string {
	s := fmt.Sprintf("%s: %d registers, %d bytes shared, %d bytes stack", r.Name, r.Registers, r.SharedBytes, r.StackBytes)
	if r.SpillStores > 0 || r.SpillLoads > 0 {
		s += fmt.Sprintf(", spills %d bytes stored, %d bytes loaded", r.SpillStores, r.SpillLoads)
	}
	return s
}

var (
	ptxasEntryRE = regexp.MustCompile(`^ptxas info\s*: Compiling entry function '([^']+)' for '([^']+)'`)
	ptxasPropsRE = regexp.MustCompile(`^ptxas info\s*: Function properties for (\S+)`)
	ptxasFrameRE = regexp.MustCompile(`^\s*(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
	ptxasUsedRE  = regexp.MustCompile(`^ptxas info\s*: Used (\d+) registers(.*)$`)
	ptxasBytesRE = regexp.MustCompile(`^(\d+) bytes (smem|cmem\[\d+\])$`)
	ptxasBarRE   = regexp.MustCompile(`^used (\d+) barriers$`)
)

// ParsePtxasReport reads the resource report that `ptxas -v` prints,
// in the order of the entry functions it compiled:
//
//	ptxas info    : Compiling entry function 'softmax_k0' for 'sm_90'
//	ptxas info    : Function properties for softmax_k0
//	    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//	ptxas info    : Used 32 registers, used 0 barriers, 8 bytes smem, 400 bytes cmem[0]
//
// ("used N barriers" appears from nvcc 12 on). Non-entry functions (a
// __noinline__ device function) have properties but no report of their
// own and are left out. Lines it does not know are skipped.
func ParsePtxasReport(log string) []FuncResources {
	var out []FuncResources
	index := map[string]int{} // entry name -> position in out
	props := map[string][3]int{}
	current := -1  // the entry whose "Used" line comes next
	propsFor := "" // the function whose stack line comes next
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := ptxasEntryRE.FindStringSubmatch(line); m != nil {
			if i, ok := index[m[1]]; ok {
				current = i
			} else {
				index[m[1]] = len(out)
				current = len(out)
				out = append(out, FuncResources{Name: m[1]})
			}
			continue
		}
		if m := ptxasPropsRE.FindStringSubmatch(line); m != nil {
			propsFor = m[1]
			continue
		}
		if m := ptxasFrameRE.FindStringSubmatch(line); m != nil && propsFor != "" {
			props[propsFor] = [3]int{atoi(m[1]), atoi(m[2]), atoi(m[3])}
			propsFor = ""
			continue
		}
		if m := ptxasUsedRE.FindStringSubmatch(line); m != nil && current >= 0 {
			r := &out[current]
			r.Registers = atoi(m[1])
			for _, part := range strings.Split(m[2], ",") {
				part = strings.TrimSpace(part)
				if b := ptxasBytesRE.FindStringSubmatch(part); b != nil {
					if b[2] == "smem" {
						r.SharedBytes += atoi(b[1])
					} else {
						r.ConstBytes += atoi(b[1])
					}
				} else if b := ptxasBarRE.FindStringSubmatch(part); b != nil {
					r.Barriers = atoi(b[1])
				}
			}
			current = -1
		}
	}
	for i := range out {
		if p, ok := props[out[i].Name]; ok {
			out[i].StackBytes, out[i].SpillStores, out[i].SpillLoads = p[0], p[1], p[2]
		}
	}
	return out
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// ToolMessage is one diagnostic printed by a tool of the CUDA toolchain,
// with its position when the tool gave one.
type ToolMessage struct {
	Tool     string // "nvcc" (its front end), "ptxas", "host" (the host preprocessor/compiler)
	File     string // "" when the tool names no file (most ptxas errors)
	Line     int    // 0 when unknown
	Col      int    // 0 when unknown
	Severity string // "error", "warning", "fatal", "note", "remark"
	Text     string
	Notes    []string // continuation lines: argument types, instantiation context
}

// String prints the message as `file:line:col: error: text`, leaving out
// what is unknown.
func (m ToolMessage) String() string {
	var b strings.Builder
	if m.File != "" {
		b.WriteString(m.File)
		if m.Line > 0 {
			fmt.Fprintf(&b, ":%d", m.Line)
			if m.Col > 0 {
				fmt.Fprintf(&b, ":%d", m.Col)
			}
		}
		b.WriteString(": ")
	} else if m.Tool != "" {
		b.WriteString(m.Tool + ": ")
	}
	fmt.Fprintf(&b, "%s: %s", m.Severity, m.Text)
	for _, n := range m.Notes {
		b.WriteString("\n\t" + n)
	}
	return b.String()
}

var (
	// EDG, nvcc's C++ front end: `k.cu(12): error: identifier "x" is undefined`,
	// `k.cu(2): warning #177-D: variable "a" was declared but never referenced`.
	edgMsgRE = regexp.MustCompile(`^(.+?)\((\d+)\): (catastrophic error|error|warning|remark)(?: #[\w-]+)?: (.*)$`)
	// The host preprocessor and compiler (gcc, clang): `k.cu:1:10: fatal error: x.h: No such file or directory`.
	hostMsgRE = regexp.MustCompile(`^(.+?):(\d+):(?:(\d+):)? (fatal error|error|warning|note): (.*)$`)
	// ptxas with a PTX position: `ptxas /tmp/x.ptx, line 12; error   : Unknown symbol 'y'`.
	ptxasPosRE = regexp.MustCompile(`^ptxas (.+), line (\d+); (error|warning|fatal)\s*: (.*)$`)
	// A tool without a position: `ptxas error   : Entry function 'k' uses too much shared data`,
	// `nvcc fatal   : Value 'sm_90a' is not defined for option 'gpu-architecture'`.
	toolMsgRE = regexp.MustCompile(`^(nvcc|ptxas|nvlink|cicc|fatbinary) (error|warning|fatal)\s*: (.*)$`)
	// The host compiler's source echo: `    1 | #include "x.h"` and `      |          ^~~~`.
	hostEchoRE = regexp.MustCompile(`^\s*\d*\s*\|`)
	edgHereRE  = regexp.MustCompile(`^\(\d+\): here`)
)

// ParseCompilerOutput picks the diagnostics out of what nvcc printed
// (its front end, ptxas and the host compiler all write to nvcc's
// stderr). Info lines, summaries ("2 errors detected ...") and source
// echoes are dropped; indented lines that follow a message become its notes.
func ParseCompilerOutput(log string) []ToolMessage {
	var out []ToolMessage
	last := -1 // the message that continuation lines attach to
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			last = -1
			continue
		}
		if m := edgMsgRE.FindStringSubmatch(line); m != nil {
			out = append(out, ToolMessage{Tool: "nvcc", File: m[1], Line: atoi(m[2]), Severity: m[3], Text: m[4]})
			last = len(out) - 1
			continue
		}
		if m := ptxasPosRE.FindStringSubmatch(line); m != nil {
			out = append(out, ToolMessage{Tool: "ptxas", File: m[1], Line: atoi(m[2]), Severity: m[3], Text: m[4]})
			last = len(out) - 1
			continue
		}
		if m := toolMsgRE.FindStringSubmatch(line); m != nil {
			if m[1] == "ptxas" && m[2] == "fatal" && strings.HasPrefix(m[3], "Ptx assembly aborted") {
				last = -1 // ptxas's summary of the errors already reported
				continue
			}
			out = append(out, ToolMessage{Tool: m[1], Severity: m[2], Text: m[3]})
			last = len(out) - 1
			continue
		}
		if m := hostMsgRE.FindStringSubmatch(line); m != nil {
			out = append(out, ToolMessage{Tool: "host", File: m[1], Line: atoi(m[2]), Col: atoi(m[3]), Severity: m[4], Text: m[5]})
			last = len(out) - 1
			continue
		}
		if last < 0 || hostEchoRE.MatchString(line) || strings.TrimSpace(line) == "^" {
			continue
		}
		if line[0] != ' ' && line[0] != '\t' && !edgHereRE.MatchString(line) {
			last = -1 // an unindented line that is not a message ends the continuation
			continue
		}
		msg := &out[last]
		note := strings.TrimSpace(line)
		if edgHereRE.MatchString(line) && len(msg.Notes) > 0 {
			// EDG wraps "detected during instantiation of ... at line 5 of k.cu"
			// as "... \n(5): here"; keep it one note.
			msg.Notes[len(msg.Notes)-1] += " " + note
			continue
		}
		msg.Notes = append(msg.Notes, note)
	}
	return out
}
