package main

import "testing"

// TestSizeCopyBytes: the copy beside an instance is half its bytes,
// rounded up to a multiple of 64 KiB (groupnorm_kb's 536871424 bytes, 256
// MiB + 256 a side, copy 256 MiB + 64 KiB).
func TestSizeCopyBytes(t *testing.T) {
	for _, c := range []struct{ bytes, want int64 }{
		{536870912, 268435456},
		{536871424, 268500992},
		{536871936, 268500992},
		{2, 65536},
		{131072, 65536},
		{131074, 131072},
	} {
		if got := sizeCopyBytes(c.bytes); got != c.want {
			t.Errorf("sizeCopyBytes(%d) = %d, want %d", c.bytes, got, c.want)
		}
	}
}
