//go:build !freshness_optimistic && !freshness_fifo

package freshness

import "github.com/flipbench/flipbench/examples/freshness"

// lanePolicy is the stage B policy the lanes run: in a build without a policy tag, the
// pessimistic one (ADR-0009), experiment 10's base arm.
const lanePolicy = freshness.Pessimistic
