package main

import (
	"os"
	"testing"
)

// TestMain keeps the tests from the user's tuning database: builds take
// the heuristic defaults unless a test names a database with --db.
func TestMain(m *testing.M) {
	os.Setenv("KGEN_TUNE_DB", "off")
	os.Exit(m.Run())
}
