//go:build pluginhost_fair

package pluginhost

// DefaultPolicy is the policy of Options.Policy's zero value: fewest-active-first in this
// build (-tags pluginhost_fair); first in, first out without the tag. Experiment 40 builds
// its two arms this way, so each arm is its own binary with the same lanes.
const DefaultPolicy = PolicyFair
