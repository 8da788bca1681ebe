package main

import (
	"strings"
	"testing"

	kgrt "kgen.dev/kgen/runtime"
)

// TestRunsOn checks which targets' kernels run on which GPU: the same
// major compute capability and at least the target's minor one; sm_90a
// code only on 9.0; AMD targets on no NVIDIA GPU.
func TestRunsOn(t *testing.T) {
	h100 := kgrt.Device{CCMajor: 9, CCMinor: 0}
	a100 := kgrt.Device{CCMajor: 8, CCMinor: 0}
	rtx3090 := kgrt.Device{CCMajor: 8, CCMinor: 6}
	cases := []struct {
		target string
		dev    kgrt.Device
		runs   bool
	}{
		{"cuda:sm_90", h100, true}, {"cuda:sm_90a", h100, true}, {"cuda:sm_80", h100, false},
		{"cuda:sm_80", a100, true}, {"cuda:sm_80", rtx3090, true}, {"cuda:sm_90", a100, false},
		{"triton:sm_90", h100, true}, {"triton:sm_80", a100, true}, {"hip:nvidia", h100, true},
		{"hip:gfx90a", h100, false}, {"hip:gfx1030", a100, false},
	}
	for _, c := range cases {
		tgt, err := kgrt.ParseTarget(c.target)
		if err != nil {
			t.Fatal(err)
		}
		if why := runsOn(tgt, c.dev); (why == "") != c.runs {
			t.Errorf("%s on sm_%d%d: %q, want runs=%v", c.target, c.dev.CCMajor, c.dev.CCMinor, why, c.runs)
		}
	}
}

func TestParseTargets(t *testing.T) {
	all, err := parseTargets("all")
	if err != nil || len(all) != len(kgrt.Targets()) {
		t.Errorf("all: %v, %v", all, err)
	}
	two, err := parseTargets("cuda:sm_90, triton:sm_90")
	if err != nil || len(two) != 2 || two[1].String() != "triton:sm_90" {
		t.Errorf("list: %v, %v", two, err)
	}
	if _, err := parseTargets("cuda:sm_90,cuda:sm_75"); err == nil || !strings.Contains(err.Error(), "sm_75") {
		t.Errorf("bad target in a list: %v", err)
	}
}
