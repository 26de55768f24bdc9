//go:build freshness_optimistic && !freshness_fifo

package freshness

import "github.com/flipbench/flipbench/examples/freshness"

// lanePolicy is the stage B policy the lanes run: with -tags freshness_optimistic, the
// optimistic one (ADR-0010), experiment 10's candidate.
const lanePolicy = freshness.Optimistic
