package lower

import (
	"testing"

	"kgen.dev/kgen/frontend"
)

// TestWindowAcceptsFits: the window template refuses a window whose
// smallest tile (2 x 32 points) stages more than maxWindowSmem, so that
// its default always checks. (Such windows have hundreds of taps, and the
// row-reduce template, before it in the table, takes them today.)
func TestWindowAcceptsFits(t *testing.T) {
	prog, diags := frontend.CheckSource("wide.kg", `
kernel pool<H, W, K, S>(X: f64[H, W]) -> (Y: f64[OH, OW]) where OH = (H - K) / S + 1, OW = (W - K) / S + 1 {
  Y[h, w] = sum[i in 0..K, j in 0..K](X[h * S + i, w * S + j])
}
instance fits = pool<H = 4096, W = 4096, K = 8, S = 4>
instance over = pool<H = 4096, W = 4096, K = 16, S = 8>
`)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	// over: 16 x 16 taps at stride 8, 4 windows an element; its smallest
	// tile stages 24 x 264 f64, 50688 bytes.
	for name, want := range map[string]bool{"fits": true, "over": false} {
		in := prog.Instance(name)
		p, err := Build(in.Kernel, in.Env, in.Name, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		s := p.Launches[0].Stmt
		if MatchWindow(s) == nil {
			t.Fatalf("%s: no window", name)
		}
		if got := (windowTemplate{}).Accepts(s); got != want {
			t.Errorf("%s: window template accepts %v, want %v", name, got, want)
		}
	}
}
