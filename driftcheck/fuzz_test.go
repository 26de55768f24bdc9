package driftcheck_test

import (
	"encoding/json"
	"path"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/testkit/seeds"
)

// FuzzParseScenarios feeds drift --input documents to ParseScenarios and the analysis:
// nothing may crash either, and what parses is analysed (or refused with an error), with
// a report that encodes as JSON (what --json prints).
func FuzzParseScenarios(f *testing.F) {
	docs, err := seeds.ScriptFiles(seeds.ScriptDir, func(name string) bool { return path.Ext(name) == ".json" })
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range docs {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := driftcheck.ParseScenarios(data)
		if err != nil {
			return
		}
		for _, o := range in.Observations {
			for _, x := range o.Samples {
				if x < 0 {
					t.Fatalf("accepted a negative time %v", x)
				}
			}
		}
		rep, err := driftcheck.Analyze(in, driftcheck.DefaultConfig())
		if err != nil {
			return
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Fatalf("the report does not encode: %v", err)
		}
	})
}
