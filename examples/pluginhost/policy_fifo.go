//go:build !pluginhost_fair

package pluginhost

// DefaultPolicy is the policy of Options.Policy's zero value: first in, first out in this
// build; fewest-active-first in a build with -tags pluginhost_fair. Experiment 40 builds
// its two arms this way, so each arm is its own binary with the same lanes.
const DefaultPolicy = PolicyFIFO
