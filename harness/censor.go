package harness

import (
	"bytes"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// timeoutBound returns what a run killed at its timeout after wall (its wall time, at most
// the timeout: what it ran before the kill) is known to be at least
// per operation, and its unit: the wall time over the operations the run had to do,
// (warmup + samples) x the operations of one sample. That is a lower bound of the run's
// mean time per operation (had it finished, its work would have taken longer than wall),
// up to the process's start-up and setup, which wall includes and which are small against
// a timeout set well beyond a normal run. The operations of a sample are the lane's fixed
// iteration count, else the largest count the results it printed before the kill show;
// the unit is the lane's, else the one those results print. It returns 0 when either is
// unknown, when the unit is not a time per operation, or for a counted lane (its samples
// are instructions): the run then counts as failed. A lane judged by its on-CPU time
// (metric cpu or auto) passes the process's CPU time as wall: on-CPU time per operation is
// at most its wall time, so only the CPU time it used bounds it from below.
func timeoutBound(stdout []byte, lane receipt.Lane, proto receipt.Protocol, wall time.Duration) (float64, string) {
	if lane.Metric == lanekind.MetricInstructions || wall <= 0 {
		return 0, ""
	}
	unit, iters := lane.Unit, lane.Iterations
	r := benchfmt.NewReader(bytes.NewReader(stdout), "stdout")
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok || len(res.Values) == 0 {
			continue
		}
		if unit == "" {
			unit = res.Values[0].OrigUnit
			if unit == "" {
				unit = res.Values[0].Unit
			}
		}
		if lane.Iterations == 0 {
			iters = max(iters, res.Iters)
		}
	}
	perUnit, ok := receipt.PerOpSeconds(unit)
	ops := float64(proto.Warmup+proto.Samples) * float64(iters)
	if !ok || !(ops > 0) {
		return 0, ""
	}
	return wall.Seconds() / ops / perUnit, unit
}
