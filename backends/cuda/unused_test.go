package cuda

import "testing"

// TestDropUnused: an integer constant that nothing after it in its block
// reads goes, and so does one that only those read; one read later in its
// block or in a block inside it stays, as do initializers with calls and
// lines of two declarators. A name inside a longer name, in a comment, or
// read after its block closes (another variable) is no read.
func TestDropUnused(t *testing.T) {
	src := `{
  const int64_t kg_first = i;
  const int64_t unused = kg_first * 4;  // read by nothing
  const int64_t inner = 3;
  const int64_t later = 5;
  const int kg_t = kg_next(x);
  const int64_t a = 1, b = 2;
  const int64_t d = 7;
  for (int k = 0; k < 4; ++k) {
    const int64_t shadow = k;
    y[k] = inner + kg_d;  // d
  }
  y[0] = later;
}
y[1] = shadow;`
	want := `{
  const int64_t inner = 3;
  const int64_t later = 5;
  const int kg_t = kg_next(x);
  const int64_t a = 1, b = 2;
  for (int k = 0; k < 4; ++k) {
    y[k] = inner + kg_d;  // d
  }
  y[0] = later;
}
y[1] = shadow;`
	if got := dropUnused(src); got != want {
		t.Errorf("dropUnused:\n%s\nwant:\n%s", got, want)
	}
}
