//go:build flipbench_probe

package probe

import "sync/atomic"

// Enabled reports whether the counters count: true in a build with -tags flipbench_probe.
const Enabled = true

// counts holds every counter's value. It is the package's one piece of mutable state,
// and it exists only in a probe build (see the package documentation for why).
var counts [numCounters]atomic.Uint64

// Add adds n to the counter. It is safe for concurrent use.
func (c Counter) Add(n uint64) {
	if c < numCounters {
		counts[c].Add(n)
	}
}

// Load returns the counter's value. It is safe for concurrent use.
func (c Counter) Load() uint64 {
	if c >= numCounters {
		return 0
	}
	return counts[c].Load()
}
