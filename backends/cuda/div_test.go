package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostDivByReciprocal runs the prelude's kg_div, a division through
// the divisor's reciprocal computed once (kg_recip), as the host emulator
// compiles it, on 2^22 dividends for each of 120 divisors, and compares
// every quotient bit for bit with the host's division (IEEE 754, correctly
// rounded). The divisors are the awkward ones (1, all-ones and near-power
// significands, the ends of kg_recip's range and past them, subnormal, 0,
// infinite, NaN) and random ones; the dividends random bit patterns over
// every exponent, then random significands at each exponent of the fast
// path's ends, and the special values. Most of the pairs take the fast
// path (counted: the test fails if none do).
func TestHostDivByReciprocal(t *testing.T) {
	gxx := emulatorGxx(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "d.cpp")
	main := `
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <cmath>
static float fromBits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t bitsOf(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint32_t next() { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return (uint32_t)(state >> 11); }
static volatile float sink;
int main() {
  const uint32_t special[] = {0x3f800000u, 0x3fffffffu, 0x3f7fffffu, 0x3f800001u, 0x4b7fffffu, 0x33800000u, 0x4b800000u,
    0x33800001u, 0x337fffffu, 0x4b800001u, 0x4b7ffffeu, 0x00000001u, 0x007fffffu, 0x00800000u, 0x7f7fffffu, 0x00000000u,
    0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x40490fdbu, 0x3eaaaaabu, 0x41200000u, 0x47c35000u};
  long fast = 0, wrong = 0;
  for (int i = 0; i < 120; i++) {
    uint32_t bb = i < 24 ? special[i] : i < 48 ? (special[i - 24] ^ 0x80000000u) : ((next() & 0x807fffffu) | ((uint32_t)(103 + next() % 49) << 23));
    const float b = fromBits(bb);
    const KgRecip d = kg_recip(b);
    for (uint32_t j = 0; j < (1u << 22); j++) {
      uint32_t ab;
      if (j < (1u << 23)) {
        ab = next();
      } else if (j < (1u << 22) - 64) {
        // the fast path's ends: exponents 2^-101..2^-99 and 2^99..2^101
        const uint32_t e = (j & 1) ? 26 + next() % 3 : 226 + next() % 3;
        ab = (next() & 0x807fffffu) | (e << 23);
      } else {
        ab = special[j % 24] ^ ((j & 32) ? 0x80000000u : 0u);
      }
      const float a = fromBits(ab);
      const float got = kg_div(a, d);
      sink = b;
      const float want = a / sink;
      const float aa = fabsf(a);
      if (aa >= d.lo && aa <= 0x1p100f) fast++;
      if (bitsOf(got) != bitsOf(want) && !(got != got && want != want)) {
        if (wrong < 10) printf("wrong %08x / %08x: got %08x want %08x\n", ab, bb, bitsOf(got), bitsOf(want));
        wrong++;
      }
    }
  }
  printf("fast %ld wrong %ld\n", fast, wrong);
}
`
	if err := os.WriteFile(src, []byte(CUDA.Emit(nil, 32)+main), 0o644); err != nil {
		t.Fatal(err)
	}
	shim, _ := filepath.Abs("testdata/host/shim.h")
	bin := filepath.Join(dir, "d")
	if out, err := exec.Command(gxx, "-std=c++20", "-O2", "-ffp-contract=off", "-w", "-include", shim, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	var fast, wrong int64
	if _, err := fmt.Sscanf(last, "fast %d wrong %d", &fast, &wrong); err != nil {
		t.Fatalf("unexpected output %q", out)
	}
	if wrong != 0 || fast < 1<<28 {
		t.Errorf("%d quotients differ from the division's, %d of them through the reciprocal (want 0, and over 2^28):\n%s", wrong, fast, out)
	}
}
