package lower_test

import (
	"strings"
	"testing"

	"kgen.dev/kgen/frontend"
	"kgen.dev/kgen/ir"
	"kgen.dev/kgen/lower"
)

// TestMatchWindow: a window's strides, first offsets and spans, by hand
// from each statement's subscripts; subscripts that are no sliding window
// are not windows. Windows of fewer than MinWindowTaps taps, that cover
// an element fewer than MinWindowReuse times, or whose rows a thread
// reads as vectors go point by point; the window template takes the
// others.
func TestMatchWindow(t *testing.T) {
	prog, diags := frontend.CheckSource("window.kg", `
kernel dw<N, C, H, W, KH, KW; stride: i32 = 1, pad: i32 = 0, dil: i32 = 1>(X: f32[N, C, H, W], Wt: f32[C, KH, KW]) -> (Y: f32[N, C, OH, OW])
    where OH = (H + 2 * pad - dil * (KH - 1) - 1) / stride + 1, OW = (W + 2 * pad - dil * (KW - 1) - 1) / stride + 1 {
  Y[n, c, oh, ow] = sum[kh, kw]((X[n, c, oh * stride + kh * dil - pad, ow * stride + kw * dil - pad] ?? 0) * Wt[c, kh, kw])
}
kernel flipped<H, W>(X: f32[H, W]) -> (Y: f32[H, W]) {
  Y[h, w] = sum[i in 0..3, j in 0..5]((X[h - i, w + 4 - j] ?? 0))
}
kernel rows<R, D>(X: f32[R, D]) -> (Y: f32[R, OD]) where OD = D - 7 {
  Y[r, d] = sum[k in 0..8](X[r, d + k]) / 8
}
kernel squared<H, W>(X: f32[H, W]) -> (Y: f32[H, W]) {
  Y[h, w] = sum[i in 0..3, j in 0..3]((X[h * h + i, w + j] ?? 0))
}
kernel swapped<H, W>(X: f32[H, W]) -> (Y: f32[H, W]) {
  Y[h, w] = sum[i in 0..3, j in 0..3]((X[w + j, h + i] ?? 0))
}
instance dw3 = dw<N = 2, C = 4, H = 16, W = 16, KH = 3, KW = 3, pad = 1>
instance dw5_s2 = dw<N = 2, C = 4, H = 16, W = 16, KH = 5, KW = 5, stride = 2, pad = 2>
instance dw5_s2_odd = dw<N = 2, C = 4, H = 15, W = 15, KH = 5, KW = 5, stride = 2, pad = 2>
instance dw3_s2 = dw<N = 2, C = 4, H = 16, W = 16, KH = 3, KW = 3, stride = 2, pad = 1>
instance dw4_s4 = dw<N = 2, C = 4, H = 16, W = 16, KH = 4, KW = 4, stride = 4>
instance dw3_dil = dw<N = 2, C = 4, H = 16, W = 16, KH = 3, KW = 3, pad = 2, dil = 2>
instance flipped_small = flipped<H = 9, W = 9>
instance rows_small = rows<R = 4, D = 40>
instance squared_small = squared<H = 4, W = 4>
instance swapped_small = swapped<H = 8, W = 8>
`)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	type want struct {
		sh, sw, h0, w0, spanH, spanW, taps int64
		tmpl                               string
	}
	wants := map[string]*want{
		"dw3":           {1, 1, -1, -1, 3, 3, 9, "generic"},
		"dw5_s2":        {2, 2, -2, -2, 5, 5, 25, "generic"}, // rows of 8 outputs, 16 inputs: vectors of 4
		"dw5_s2_odd":    {2, 2, -2, -2, 5, 5, 25, "window"},  // rows of 8 outputs, 15 inputs
		"dw3_s2":        {2, 2, -1, -1, 3, 3, 9, "generic"},
		"dw4_s4":        {4, 4, 0, 0, 4, 4, 16, "generic"}, // 16 taps, but an element under 1 window
		"dw3_dil":       {1, 1, -2, -2, 5, 5, 9, "generic"},
		"flipped_small": {1, 1, -2, 0, 3, 5, 15, "window"}, // rows of 9
		"rows_small":    {1, 1, 0, 0, 1, 8, 8, "generic"},
		"squared_small": nil, // h * h: no stride
		"swapped_small": nil, // the rows slide along w
	}
	for _, in := range prog.Instances {
		want, ok := wants[in.Name]
		if !ok {
			continue
		}
		delete(wants, in.Name)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		w := lower.MatchWindow(p.Launches[0].Stmt)
		switch {
		case want == nil && w != nil:
			t.Errorf("%s: a window (%+v), want none", in.Name, *w)
		case want != nil && w == nil:
			t.Errorf("%s: no window, want %+v", in.Name, *want)
		case want != nil:
			got := fields(w.SH, w.SW, w.H0, w.W0, w.SpanH, w.SpanW, w.Taps)
			if got != [7]int64{want.sh, want.sw, want.h0, want.w0, want.spanH, want.spanW, want.taps} {
				t.Errorf("%s: strides, offsets, spans and taps %v, want %+v", in.Name, got, *want)
			}
			if name := p.Launches[0].Template.Name(); name != want.tmpl {
				t.Errorf("%s: template %s, want %s", in.Name, name, want.tmpl)
			}
		}
	}
	for name := range wants {
		t.Errorf("instance %s not found", name)
	}
}

func fields(v ...int64) (a [7]int64) {
	copy(a[:], v)
	return a
}

// TestWindowDefaultFits: the window default's staged input fits the
// shared memory a tile may take, lowering TH then TW.
func TestWindowDefaultFits(t *testing.T) {
	prog, diags := frontend.CheckSource("wide.kg", `
kernel pool<H, W, K, S>(X: f64[H, W]) -> (Y: f64[OH, OW]) where OH = (H - K) / S + 1, OW = (W - K) / S + 1 {
  Y[h, w] = sum[i in 0..K, j in 0..K](X[h * S + i, w * S + j])
}
instance s4 = pool<H = 4096, W = 4096, K = 8, S = 4>
`)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	in := prog.Instance("s4")
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// 8 x 8 taps at stride 4 (4 windows an element): tiles of 2 x 128
	// points stage 12 x 516 f64, 49536 bytes, over 48 KiB; 2 x 64, 12 x
	// 260, 24960 bytes.
	if l := p.Launches[0]; l.Template.Name() != "window" || l.Config["TH"] != 2 || l.Config["TW"] != 64 {
		t.Errorf("s4: %s %v, want window with TH=2, TW=64", l.Template.Name(), l.Config)
	}
}

// TestRowVectorVec: a point-by-point 3 x 3 window at stride 1 whose output
// and input rows are whole vectors of 4 takes VEC 4 alone, a group a step
// (its rows read as vectors: lower.RowVectors), and then ROWS: it covers an
// element 9 times, and at VEC 2 and ROWS 4 a thread loads 6 rows of 6
// columns for 8 points (4.5 a point, 36 registers), where VEC 4 alone
// loads 3 rows of 12 for 4 (9), VEC 2 and ROWS 2 4 rows of 6 for 4 (6),
// VEC 4 and ROWS 4 6 of 12 for 16 (4.5, 72 registers). Planes of 6 rows
// take ROWS 2 (6 a point at VEC 2 and 4; VEC 2 in fewer registers). Rows
// of 18, whole vectors of 2 only, VEC 2 and ROWS 4; rows of 17
// windowVec's 2 and 4 (its scalar loop at run time; Triton's tile
// templates are tested apart). At stride 2, 3 x 3 taps cover an element
// 2.25 times: VEC 4 alone; 5 x 5, 6.25 times, ROWS 4 at VEC 2 (11 rows
// of 8 columns for 8 points, 88 registers); 7 x 7, ROWS 2 at VEC 2 (9
// rows of 10, 90; VEC 4's 7 rows of 16 do not fit). RowVectors' first
// column and vectors a row, by hand: 3 taps from -1 at VEC 4 read
// columns -4 to 7, three vectors; a dilated window's 5 columns from -2
// at VEC 2, -2 to 3; at stride 2, 3 taps from -1 at VEC 4 columns -1 to
// 7 of 2 x the first point's (-4 to 7, three vectors), and 5 taps from -2
// at VEC 2 columns -2 to 4 (four vectors), at VEC 4 -2 to 8 (-4 to 11,
// four vectors); 7 taps at VEC 4, 7 rows of 16, more registers than rows
// may take.
func TestRowVectorVec(t *testing.T) {
	prog, diags := frontend.CheckSource("rows.kg", `
kernel dw<N, H, W>(X: f32[N, H, W], Wt: f32[3, 3]) -> (Y: f32[N, H, W]) {
  Y[n, oh, ow] = sum[kh in 0..3, kw in 0..3]((X[n, oh + kh - 1, ow + kw - 1] ?? 0) * Wt[kh, kw])
}
kernel dil<N, H, W>(X: f32[N, H, W], Wt: f32[3, 3]) -> (Y: f32[N, H, W]) {
  Y[n, oh, ow] = sum[kh in 0..3, kw in 0..3]((X[n, oh + (kh - 1) * 2, ow + (kw - 1) * 2] ?? 0) * Wt[kh, kw])
}
instance dw16 = dw<N = 2, H = 8, W = 16>
instance dw16h6 = dw<N = 2, H = 6, W = 16>
instance dw18 = dw<N = 2, H = 8, W = 18>
instance dw17 = dw<N = 2, H = 8, W = 17>
instance dil16 = dil<N = 2, H = 8, W = 16>
kernel dws<N, H, W, K; stride: i32 = 2, pad: i32 = 1>(X: f32[N, H, W], Wt: f32[K, K]) -> (Y: f32[N, OH, OW])
    where OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1 {
  Y[n, oh, ow] = sum[kh in 0..K, kw in 0..K]((X[n, oh * stride + kh - pad, ow * stride + kw - pad] ?? 0) * Wt[kh, kw])
}
instance s2k3 = dws<N = 2, H = 16, W = 16, K = 3>
instance s2k5 = dws<N = 2, H = 16, W = 16, K = 5, pad = 2>
instance s2k7 = dws<N = 2, H = 16, W = 16, K = 7, pad = 3>
`)
	if diags.HasErrors() {
		t.Fatalf("%v", diags.Diags[0].Msg)
	}
	type want struct{ vec, unroll, rows int64 }
	for _, c := range []struct {
		inst   string
		config want
	}{
		{"dw16", want{2, 1, 4}},
		{"dw16h6", want{2, 1, 2}},
		{"dw18", want{2, 1, 4}},
		{"dw17", want{2, 4, 1}},
		{"dil16", want{2, 1, 4}},
		{"s2k3", want{4, 1, 1}},
		{"s2k5", want{2, 1, 4}},
		{"s2k7", want{2, 1, 2}},
	} {
		in := prog.Instance(c.inst)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		l := p.Launches[0]
		if got := (want{l.Config["VEC"], l.Config["UNROLL"], l.Config["ROWS"]}); l.Template.Name() != "generic" || got != c.config {
			t.Errorf("%s: %s VEC, UNROLL, ROWS %v, want generic %v", c.inst, l.Template.Name(), got, c.config)
		}
	}
	for _, c := range []struct {
		inst            string
		vec, base, vecs int64
	}{
		{"dw16", 4, -4, 3},
		{"dw16", 2, -2, 3},
		{"dil16", 2, -2, 3},
		{"dil16", 4, -4, 3},
		{"s2k3", 4, -4, 3},
		{"s2k5", 2, -2, 4},
		{"s2k5", 4, -4, 4},
	} {
		in := prog.Instance(c.inst)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		w := lower.MatchWindow(p.Launches[0].Stmt)
		base, vecs, ok := lower.RowVectors(w, c.vec, 1)
		if !ok || base != c.base || vecs != c.vecs {
			t.Errorf("%s at VEC %d: first column %d, %d vectors (%v), want %d, %d", c.inst, c.vec, base, vecs, ok, c.base, c.vecs)
		}
	}
	in := prog.Instance("s2k7")
	p, err := lower.Build(in.Kernel, in.Env, in.Name, lower.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if base, vecs, ok := lower.RowVectors(lower.MatchWindow(p.Launches[0].Stmt), 4, 1); ok || base != -4 || vecs != 4 {
		t.Errorf("s2k7 at VEC 4: first column %d, %d vectors, fits %v; want -4, 4, not fitting (7 rows of 16)", base, vecs, ok)
	}
}

// TestWindowRows: ROWS (a thread's VEC points of each of ROWS output
// rows) where the rows fit, and refused with the reason where not. By
// hand: 5 x 5 taps at stride 2 over 32 output rows read (ROWS-1)*2 + 5
// input rows: at VEC 2, 8 columns a row (-2 to 5), 7 rows at ROWS 2 (56
// registers) and 11 at ROWS 4 (88) fit; at VEC 4, 16 columns, 7 rows
// (112) and 11 (176) do not. Planes of 7 output rows take no ROWS 2; VEC
// 1, or a sum whose rows do not slide with the output's, none.
func TestWindowRows(t *testing.T) {
	prog, sm90 := checkOnSm90(t, "rows.kg", `
kernel dws<N, H, W, K; stride: i32 = 2, pad: i32 = 2>(X: f32[N, H, W], Wt: f32[K, K]) -> (Y: f32[N, OH, OW])
    where OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1 {
  Y[n, oh, ow] = sum[kh in 0..K, kw in 0..K]((X[n, oh * stride + kh - pad, ow * stride + kw - pad] ?? 0) * Wt[kh, kw])
}
kernel squared<H, W>(X: f32[H, W]) -> (Y: f32[H, W]) {
  Y[h, w] = sum[i in 0..3, j in 0..3]((X[h * h + i, w + j] ?? 0))
}
instance s2k5 = dws<N = 16, H = 64, W = 64, K = 5>
instance s2k5_odd = dws<N = 2, H = 14, W = 16, K = 5>
instance squared8 = squared<H = 8, W = 8>
`)
	for _, c := range []struct {
		inst      string
		vec, rows int64
		fits      bool
		refusal   string
		blocks    int64
	}{
		// 16 x 32 x 32 outputs, 64 threads a block, each taking VEC x
		// ROWS of them.
		{"s2k5", 2, 1, true, "", 128},
		{"s2k5", 2, 2, true, "", 64},
		{"s2k5", 2, 4, true, "", 32},
		{"s2k5", 4, 4, false, "the window's 11 rows of 4-point groups take more than 96 registers", 0},
		{"s2k5", 4, 2, false, "the window's 7 rows of 4-point groups take more than 96 registers", 0},
		{"s2k5", 1, 2, false, "VEC must be 2 or more", 0},
		{"s2k5_odd", 2, 2, false, "output planes of 7 rows, not a multiple of 2", 0},
		{"squared8", 2, 2, false, "no window of constant strides", 0},
	} {
		in := prog.Instance(c.inst)
		p, err := lower.Build(in.Kernel, in.Env, in.Name, sm90)
		if err != nil {
			t.Fatal(err)
		}
		_, err = lower.Override(p, lower.Config{"generic.VEC": c.vec, "generic.ROWS": c.rows, "generic.THREADS": 64, "generic.UNROLL": 1}, sm90)
		if c.fits {
			if err != nil {
				t.Errorf("%s at VEC %d, ROWS %d: %v", c.inst, c.vec, c.rows, err)
				continue
			}
			l := p.Launches[0]
			if b, ok := lower.Simplify(l.Template.Grid(l).Blocks).(*ir.Const); !ok || b.I != c.blocks {
				t.Errorf("%s at VEC %d, ROWS %d: %v blocks, want %d", c.inst, c.vec, c.rows, l.Template.Grid(l).Blocks, c.blocks)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.refusal) {
			t.Errorf("%s at VEC %d, ROWS %d: %v, want a refusal saying %q", c.inst, c.vec, c.rows, err, c.refusal)
		}
	}
}
