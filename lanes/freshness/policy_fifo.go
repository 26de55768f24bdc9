//go:build freshness_fifo && !freshness_optimistic

package freshness

import "github.com/flipbench/flipbench/examples/freshness"

// lanePolicy is the stage B policy the lanes run: with -tags freshness_fifo, fifo (no
// discard before dispatch), experiment 10's reference arm.
const lanePolicy = freshness.FIFO
