package report

import (
	"fmt"
	"io"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/mdtable"
)

// InterferenceIntro says what the interference table shows.
const InterferenceIntro = "From the kernel's counts of each lane process's threads (run-queue delay over each sample's interval; docs/busy-host.md): " +
	"how many samples waited for a CPU more than 20% of their interval, and what the analysis set aside for it."

// InterferenceTable writes, per lane and arm, the samples the kernel measured, those that
// waited for a CPU, and the samples and runs set aside for it; a lane whose candidate
// waits far more than its base carries the finding on its row.
func InterferenceTable(w io.Writer, rows []driftcheck.Interference) error {
	pct := func(n, of int) string {
		if of == 0 {
			return "-"
		}
		return fmt.Sprintf("%d (%.0f%%)", n, 100*float64(n)/float64(of))
	}
	var out [][]string
	for _, r := range rows {
		note := "-"
		if r.Finding != "" {
			note = "the candidate's own waiting: nothing set aside"
		}
		out = append(out, []string{r.Lane, r.Arm, fmt.Sprint(r.Samples), pct(r.Waited, r.Samples),
			pct(r.SamplesSetAside, r.Samples), fmt.Sprintf("%d of %d", r.RunsSetAside, r.Runs), note})
	}
	return mdtable.Write(w, []string{"lane", "arm", "samples measured", "waited > 20%", "samples set aside", "runs set aside", "note"}, out)
}
