package runtime

import (
	"bytes"
	"context"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/lower"
	"kgen.dev/kgen/tensor"
)

// TestResidentInputs: timings on resident inputs write them once, launch
// the plan on them (the fake runner's "copy" copies its first buffer to
// its second), write them again once the runner has restarted, and leave
// nothing allocated after Free.
func TestResidentInputs(t *testing.T) {
	r, err := startFake(t, "")
	if err != nil {
		t.Fatal(err)
	}
	prog, diags := frontend.CheckSource("c.kg", `
kernel c<N>(X: f32[N]) -> (Y: f32[N]) {
  Y[i] = X[i]
}
instance copy = c<N = 4>
`)
	if diags.HasErrors() {
		t.Fatal(diags.Diags[0].Msg)
	}
	in := prog.Instance("copy")
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{MaxThreads: 1024, MaxSmem: 48 << 10, ThreadsPerSM: 2048, SmemPerSM: 228 << 10})
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.New(in.Kernel.Inputs[0].DType, []int64{4})
	copy(x.Data, []byte("0123456789abcdef"))
	ctx := context.Background()
	res := NewResident(r, []*tensor.Tensor{x})
	ex := &Executor{Runner: r, Binary: "copy.cubin"}
	readInput := func() []byte {
		t.Helper()
		got, err := r.Read(ctx, res.bufs[0])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	if _, err := ex.TimeResident(ctx, p, in.Env, res, TimeSpec{}); err != nil {
		t.Fatal(err)
	}
	first := res.bufs[0]
	if got := readInput(); !bytes.Equal(got, x.Data) {
		t.Fatalf("resident input holds %q, want %q", got, x.Data)
	}
	if _, err := ex.TimeResident(ctx, p, in.Env, res, TimeSpec{}); err != nil {
		t.Fatal(err)
	}
	if res.bufs[0] != first {
		t.Errorf("the second timing wrote the inputs again: buffer %+v, then %+v", first, res.bufs[0])
	}

	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := ex.TimeResident(ctx, p, in.Env, res, TimeSpec{}); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	if res.bufs[0].gen == first.gen {
		t.Errorf("after a restart the inputs stayed in the old runner's buffer %+v", first)
	}
	if got := readInput(); !bytes.Equal(got, x.Data) {
		t.Fatalf("after a restart the resident input holds %q, want %q", got, x.Data)
	}

	last := res.bufs[0]
	res.Free(ctx)
	if len(res.bufs) != 0 {
		t.Errorf("Free left %d buffers", len(res.bufs))
	}
	if _, err := r.Read(ctx, last); err == nil {
		t.Error("the freed input's buffer can still be read")
	}
}
