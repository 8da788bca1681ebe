package runtime

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// The testdata/ptxas and testdata/nvccout archives hold what real nvcc
// versions printed (the comment says which and the command), the source
// they compiled, and the expected parse written by hand:
//
//	-- stderr --           what nvcc printed (stdout and stderr)
//	-- want-resources --   NAME registers=R barriers=B spill_stores=S spill_loads=L shared=SH const=C stack=ST
//	-- want-messages --    TOOL|FILE|LINE|COL|SEVERITY|TEXT, then a tab and each note
func TestParseCapturedOutput(t *testing.T) {
	files, _ := filepath.Glob("testdata/ptxas/*.txtar")
	more, _ := filepath.Glob("testdata/nvccout/*.txtar")
	files = append(files, more...)
	if len(files) < 8 {
		t.Fatalf("found %d captured outputs, want at least 8", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(f[len("testdata/"):], ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string]string{}
			for _, file := range ar.Files {
				sec[file.Name] = string(file.Data)
			}
			for _, name := range []string{"stderr", "want-resources", "want-messages"} {
				if _, ok := sec[name]; !ok {
					t.Fatalf("no -- %s -- section", name)
				}
			}
			var got []string
			for _, r := range ParsePtxasReport(sec["stderr"]) {
				got = append(got, fmt.Sprintf("%s registers=%d barriers=%d spill_stores=%d spill_loads=%d shared=%d const=%d stack=%d",
					r.Name, r.Registers, r.Barriers, r.SpillStores, r.SpillLoads, r.SharedBytes, r.ConstBytes, r.StackBytes))
			}
			compareLines(t, "resources", got, sec["want-resources"])
			got = nil
			for _, m := range ParseCompilerOutput(sec["stderr"]) {
				got = append(got, fmt.Sprintf("%s|%s|%d|%d|%s|%s", m.Tool, m.File, m.Line, m.Col, m.Severity, m.Text))
				for _, n := range m.Notes {
					got = append(got, "\t"+n)
				}
			}
			compareLines(t, "messages", got, sec["want-messages"])
		})
	}
}

func compareLines(t *testing.T, what string, got []string, want string) {
	t.Helper()
	w := strings.Split(strings.TrimRight(want, "\n"), "\n")
	if want == "" || strings.TrimSpace(want) == "" {
		w = nil
	}
	if strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Errorf("%s:\ngot:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
}

// Report lines in the forms of other nvcc versions, one feature each.
func TestParsePtxasReportForms(t *testing.T) {
	cases := []struct {
		name, log string
		want      FuncResources
	}{
		{"nvcc 12+ reports barriers", `ptxas info    : Compiling entry function 'softmax_k0' for 'sm_90'
ptxas info    : Function properties for softmax_k0
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 8 bytes smem, 400 bytes cmem[0]
`, FuncResources{Name: "softmax_k0", Registers: 32, Barriers: 1, SharedBytes: 8, ConstBytes: 400}},
		{"older form, two constant banks", `ptxas info    : Compiling entry function 'k' for 'sm_80'
ptxas info    : Function properties for k
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 32 registers, 8 bytes smem, 400 bytes cmem[0], 16 bytes cmem[2]
`, FuncResources{Name: "k", Registers: 32, SharedBytes: 8, ConstBytes: 416, StackBytes: 8, SpillStores: 4, SpillLoads: 12}},
		{"properties before the entry line, CRLF", "ptxas info    : Function properties for k\r\n    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\r\nptxas info    : Compiling entry function 'k' for 'sm_90a'\r\nptxas info    : Used 255 registers\r\n",
			FuncResources{Name: "k", Registers: 255, StackBytes: 16}},
	}
	for _, c := range cases {
		got := ParsePtxasReport(c.log)
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: got %+v, want [%+v]", c.name, got, c.want)
		}
	}
	if got := ParsePtxasReport("nothing to see\n"); len(got) != 0 {
		t.Errorf("no report: got %+v", got)
	}
}

func TestToolMessageString(t *testing.T) {
	cases := []struct {
		m    ToolMessage
		want string
	}{
		{ToolMessage{Tool: "nvcc", File: "k.cu", Line: 3, Severity: "error", Text: `identifier "x" is undefined`}, `k.cu:3: error: identifier "x" is undefined`},
		{ToolMessage{Tool: "host", File: "k.cu", Line: 1, Col: 10, Severity: "fatal error", Text: "x.h: No such file"}, "k.cu:1:10: fatal error: x.h: No such file"},
		{ToolMessage{Tool: "ptxas", Severity: "error", Text: "too much shared data", Notes: []string{"n1"}}, "ptxas: error: too much shared data\n\tn1"},
	}
	for _, c := range cases {
		if got := c.m.String(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
