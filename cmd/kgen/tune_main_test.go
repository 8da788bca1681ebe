package main

import (
	"os"
	"testing"
)

// TestMain keeps the tests from the user's tuning database (builds take
// the heuristic defaults unless a test names a database with --db) and
// from the user's compile cache (the tests' compiles go to one of their
// own, removed after them).
func TestMain(m *testing.M) {
	os.Setenv("KGEN_TUNE_DB", "off")
	cache, err := os.MkdirTemp("", "kgen-test-compile-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("KGEN_COMPILE_CACHE", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}
