package cuda

import "testing"

// TestDropUnused: an integer constant that nothing after it in its block
// reads goes, and so does one that only those read; one read later in its
// block or in a block inside it stays, as do initializers with calls and
// lines of two declarators. A name inside a longer name, in a comment, or
// read after its block closes (another variable) is no read. A shared
// array of a fixed size that nothing reads goes too.
func TestDropUnused(t *testing.T) {
	src := `{
  __shared__ float kg_smem_f32[32];
  __shared__ KgMoments<float> kg_smem_mo_mu[32];  // read
  const int64_t kg_first = i;
  const int64_t unused = kg_first * 4;  // read by nothing
  const int64_t inner = 3;
  const int64_t later = 5;
  const int kg_t = kg_next(x);
  const int64_t a = 1, b = 2;
  const int64_t d = 7;
  for (int k = 0; k < 4; ++k) {
    const int64_t shadow = k;
    y[k] = inner + kg_d + kg_smem_mo_mu[k].n;  // d
  }
  y[0] = later;
}
y[1] = shadow;`
	want := `{
  __shared__ KgMoments<float> kg_smem_mo_mu[32];  // read
  const int64_t inner = 3;
  const int64_t later = 5;
  const int kg_t = kg_next(x);
  const int64_t a = 1, b = 2;
  for (int k = 0; k < 4; ++k) {
    y[k] = inner + kg_d + kg_smem_mo_mu[k].n;  // d
  }
  y[0] = later;
}
y[1] = shadow;`
	if got := dropUnused(src); got != want {
		t.Errorf("dropUnused:\n%s\nwant:\n%s", got, want)
	}
}
