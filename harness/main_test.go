package harness

import (
	"os"
	"testing"
)

// TestMain gives the package's tests a $TMPDIR of their own. A runner cleans up the
// temporary files killed flipbench processes left in $TMPDIR before it starts, and the
// machine's shared /tmp holds whatever other test binaries running beside these leave
// there; the tests' warnings would then depend on their neighbours.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flipbench-harness-test-")
	if err != nil {
		os.Exit(m.Run())
	}
	os.Setenv("TMPDIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
