package pluginhost

import (
	"fmt"
	"os"
	"testing"
)

// TestMain makes this test binary the plugin program: started by a ProcessLauncher (with
// WorkerEnv set) it serves calls instead of running tests, so the process tests start
// real worker processes without building anything.
func TestMain(m *testing.M) {
	if IsWorker(os.Getenv) {
		if err := Serve(os.Stdin, os.Stdout, os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
