package receipt

import (
	"math"
	"testing"
)

// TestBoundIn checks that a timed-out run's bound converts between time-per-operation
// units and is 0 where it does not apply.
func TestBoundIn(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Record
		unit string
		want float64
	}{
		{"same unit", Record{TimedOut: true, AtLeast: 5, Unit: "ns/op"}, "ns/op", 5},
		{"ns to sec", Record{TimedOut: true, AtLeast: 5e9, Unit: "ns/op"}, "sec/op", 5},
		{"ms to us", Record{TimedOut: true, AtLeast: 2, Unit: "ms/op"}, "µs/op", 2000},
		{"no bound", Record{TimedOut: true, Unit: "ns/op"}, "ns/op", 0},
		{"not timed out", Record{AtLeast: 5, Unit: "ns/op"}, "ns/op", 0},
		{"not a time", Record{TimedOut: true, AtLeast: 5, Unit: "ns/op"}, "B/op", 0},
	} {
		if got := c.r.BoundIn(c.unit); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
