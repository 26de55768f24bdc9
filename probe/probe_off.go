//go:build !flipbench_probe

package probe

// Enabled reports whether the counters count: false in a default build, where every
// counter method is empty and inlines to nothing.
const Enabled = false

// Add would add n to the counter; in a default build it does nothing.
func (Counter) Add(n uint64) {}

// Load would return the counter's value; in a default build it returns 0.
func (Counter) Load() uint64 { return 0 }
