package harness

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// BenchmarkRunOverhead measures what flipbench adds around the lane processes: a plan of
// 2 arms x 2 lanes x 4 passes x 2 collections (32 runs) over a lane that sleeps 50 ms per
// run. It reports overhead-% = (wall time of Runner.Run - sum of the runs' own durations)
// / sum; the wall time includes the host snapshots, the fsynced records and the one idle
// look at the machine before the first pass.
// Run it with: go test ./harness -run '^$' -bench RunOverhead -benchtime 3x
func BenchmarkRunOverhead(b *testing.B) {
	lane := filepath.Join(b.TempDir(), "lane.sh")
	script := "#!/bin/sh\nsleep 0.05\ni=0\nwhile [ $i -lt $2 ]; do echo \"Benchmark$1 1 50000000 ns/op\"; i=$((i+1)); done\n"
	if err := os.WriteFile(lane, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	cmd := []string{"{bin}", "{lane}", "{samples}"}
	plan := &receipt.Plan{
		Protocol: receipt.Protocol{Samples: 5, Passes: 4, Collections: 2, Timeout: time.Minute},
		Arms:     []receipt.Arm{{Name: "base", Bin: lane, Command: cmd, Kind: lanekind.Exec}, {Name: "cand", Bin: lane, Command: cmd, Kind: lanekind.Exec}},
		Lanes:    []receipt.Lane{{Name: "a"}, {Name: "b"}},
	}
	plan.Runs = Schedule([]string{"base", "cand"}, []string{"a", "b"}, 2, 4, 1, false)
	var wall, runs time.Duration
	for b.Loop() {
		dir := b.TempDir()
		r := &Runner{Dir: dir, Plan: plan, Starter: ExecStarter{}, Events: &nopEvents{}}
		start := time.Now()
		if _, err := r.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		recs, err := receipt.ReadRecords(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, rec := range recs {
			if !rec.OK() {
				b.Fatalf("run failed: %s", rec.Error)
			}
			runs += rec.Ended.Sub(rec.Started)
		}
	}
	b.ReportMetric(100*float64(wall-runs)/float64(runs), "overhead-%")
	b.ReportMetric(float64(runs)/float64(b.N)/float64(len(plan.Runs))/1e6, "ms/run")
}
