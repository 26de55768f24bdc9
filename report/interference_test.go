package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
)

func TestInterferenceTable(t *testing.T) {
	var b bytes.Buffer
	err := InterferenceTable(&b, []driftcheck.Interference{
		{Lane: "Get", Arm: "base", Runs: 8, Samples: 80, Waited: 12, SamplesSetAside: 10, RunsSetAside: 1},
		{Lane: "Get", Arm: "cand", Runs: 8, Samples: 0},
		{Lane: "Par", Arm: "cand", Runs: 8, Samples: 80, Waited: 60, Finding: "lane Par: ..."},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| Get  | base | 80               | 12 (15%)     | 10 (12%)          | 1 of 8         | -",
		"| Get  | cand | 0                | -            | -                 | 0 of 8         | -",
		"| Par  | cand | 80               | 60 (75%)     | 0 (0%)            | 0 of 8         | the candidate's own waiting: nothing set aside |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
