package harness

import (
	"math"
	"testing"
	"time"

	"github.com/flipbench/flipbench/model/receipt"
)

// TestTimeoutBound checks the bound a timed-out run records: the wall time over the
// operations the run had to do, in the lane's unit, and none where the unit or the
// operations are unknown.
func TestTimeoutBound(t *testing.T) {
	proto := receipt.Protocol{Samples: 8, Warmup: 2}
	for _, c := range []struct {
		name   string
		stdout string
		lane   receipt.Lane
		want   float64
		unit   string
	}{
		{"one result printed, ns/op", "BenchmarkX 1 1200 ns/op\n", receipt.Lane{Name: "X"}, 1e9, "ns/op"},
		{"the largest iteration count printed", "BenchmarkX 10 1200 ns/op\nBenchmarkX 100 1200 ns/op\n", receipt.Lane{Name: "X"}, 1e7, "ns/op"},
		{"a fixed iteration count, nothing printed", "", receipt.Lane{Name: "X", Iterations: 1000, Unit: "sec/op"}, 1e-3, "sec/op"},
		{"the lane's unit", "BenchmarkX 1 1200 ns/op 3 ms/op\n", receipt.Lane{Name: "X", Unit: "ms/op"}, 1e3, "ms/op"},
		{"nothing printed: operations unknown", "", receipt.Lane{Name: "X"}, 0, ""},
		{"a rate", "BenchmarkX 1 1200 MB/s\n", receipt.Lane{Name: "X"}, 0, ""},
		{"a counted lane", "BenchmarkX 1 1200 ns/op\n", receipt.Lane{Name: "X", Metric: "instructions"}, 0, ""},
	} {
		got, unit := timeoutBound([]byte(c.stdout), c.lane, proto, 10*time.Second)
		if math.Abs(got-c.want) > 1e-9*c.want || unit != c.unit {
			t.Errorf("%s: %v %s, want %v %s", c.name, got, unit, c.want, c.unit)
		}
	}
}
