package receipt

import (
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
)

// validPlan is a small plan that Validate accepts: two arms, one lane, one collection of
// two passes.
func validPlan() *Plan {
	p := &Plan{
		Arms:     []Arm{{Name: "base", Bin: "/bin/true", Command: []string{"{bin}"}}, {Name: "cand", Bin: "/bin/true", Command: []string{"{bin}"}}},
		Lanes:    []Lane{{Name: "alpha", Role: "primary"}},
		Protocol: Protocol{Samples: 3, Passes: 2, Collections: 1},
	}
	for pass := 1; pass <= 2; pass++ {
		order, arms := driftcheck.OrderForward, []string{"base", "cand"}
		if pass == 2 {
			order, arms = driftcheck.OrderReverse, []string{"cand", "base"}
		}
		for _, a := range arms {
			p.Runs = append(p.Runs, Run{Collection: 1, Pass: pass, Order: order, Lane: "alpha", Arm: a})
		}
	}
	return p
}

func TestPlanValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Plan)
		want string // "" means valid
	}{
		{name: "valid", edit: func(*Plan) {}},
		{name: "counts that overflow", edit: func(p *Plan) { p.Protocol.Samples, p.Protocol.Warmup = 1<<62, 1<<62 },
			want: "a count above 1048576 was not planned by flipbench"},
		{name: "a schedule size that overflows", edit: func(p *Plan) { p.Protocol.Passes, p.Protocol.Collections = 1<<40, 1<<40 },
			want: "a count above 1048576 was not planned by flipbench"},
		{name: "a run missing", edit: func(p *Plan) { p.Runs = p.Runs[1:] }, want: "runs: 3 scheduled, the protocol makes 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPlan()
			tt.edit(p)
			err := p.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
