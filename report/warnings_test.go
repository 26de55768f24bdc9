package report

import (
	"strings"
	"testing"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/model/receipt"
)

// TestBenchtimeWarnings checks the warning about a b.N benchmark given too few
// iterations: at 1x with sub-millisecond samples, and with a time per operation that
// falls as the iteration count grows; and no warning for a lane that is fine.
func TestBenchtimeWarnings(t *testing.T) {
	gotest := func(bt string) []string {
		return []string{"{bin}", "-test.run", "^$", "-test.bench", "^Benchmark{lane}$", "-test.benchtime", bt, "-test.count", "{count}"}
	}
	data := func(cmd []string, kind string, recs ...receipt.Record) *loaded.Receipt {
		return &loaded.Receipt{Plan: &receipt.Plan{
			Arms:  []receipt.Arm{{Name: "base", Kind: kind, Command: cmd}, {Name: "cand", Kind: kind, Command: cmd}},
			Lanes: []receipt.Lane{{Name: "Get", Role: "primary"}},
		}, Records: recs}
	}
	rec := func(arm string, ns float64, iters ...int) receipt.Record {
		r := receipt.Record{Arm: arm, Lane: "Get", Unit: "ns/op", Iters: iters}
		for range max(len(iters), 3) {
			r.Samples = append(r.Samples, ns)
		}
		return r
	}
	declared := func(bt string, d *loaded.Receipt) *loaded.Receipt {
		d.Plan.Lanes[0].Benchtime = bt
		return d
	}
	falling := receipt.Record{Arm: "base", Lane: "Get", Unit: "ns/op",
		Samples: []float64{9000, 8800, 9100, 1000, 1100, 1050}, Iters: []int{10, 10, 12, 5000, 5200, 4900}}
	for _, c := range []struct {
		name string
		d    *loaded.Receipt
		want string
	}{
		{"1x, 12µs samples", data(gotest("1x"), "gotest", rec("base", 12000), rec("cand", 12500)),
			"lane Get runs one iteration per sample (-test.benchtime 1x) and its samples take 12.3µs"},
		{"1x, 3ms samples", data(gotest("1x"), "gotest", rec("base", 3e6), rec("cand", 3e6)), ""},
		{"100ms benchtime, steady", data(gotest("100ms"), "gotest", rec("base", 500, 200000, 210000, 190000)), ""},
		{"100ms benchtime, falling", data(gotest("100ms"), "gotest", falling),
			"lane Get's time per operation falls from 9.00µs at 10 iterations to 1.05µs at 5000"},
		// A candidate 135x slower runs its own iteration count (arm_iterations): the arms
		// differ, each arm's time per operation is steady.
		{"100ms benchtime, arms at their own counts", data(gotest("100ms"), "gotest",
			rec("base", 77, 1316656, 1316656, 1316656), rec("cand", 10200, 8077, 8077, 8077)), ""},
		{"1x declared in the spec: one execution per sample on purpose", declared("1x", data(gotest("1x"), "gotest", rec("base", 12000), rec("cand", 12500))), ""},
		{"100ms declared, at 1x anyway", declared("100ms", data(gotest("1x"), "gotest", rec("base", 12000), rec("cand", 12500))),
			"lane Get runs one iteration per sample"},
		{"exec lanes are not Go benchmarks", data([]string{"{bin}"}, "exec", rec("base", 12000)), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := BenchtimeWarnings(c.d)
			switch {
			case c.want == "" && len(ws) > 0:
				t.Errorf("warnings %q, want none", ws)
			case c.want != "" && (len(ws) != 1 || !strings.HasPrefix(ws[0], c.want)):
				t.Errorf("warnings %q, want one starting %q", ws, c.want)
			}
		})
	}
}
