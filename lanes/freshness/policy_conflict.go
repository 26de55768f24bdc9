//go:build freshness_fifo && freshness_optimistic

package freshness

// A build with both policy tags has no policy: this names the mistake in the compiler's
// error instead of leaving lanePolicy undefined.
var _ = "the tags freshness_fifo and freshness_optimistic exclude each other: give an arm one of them" + 0
