package armbuild

import (
	"slices"
	"testing"

	"github.com/flipbench/flipbench/spec"
)

func TestMissingLanes(t *testing.T) {
	have := benchmarkNames("BenchmarkWork\nBenchmarkGet\nTestNotABenchmark\n\nExampleX\n")
	if want := []string{"BenchmarkWork", "BenchmarkGet"}; !slices.Equal(have, want) {
		t.Fatalf("benchmarkNames = %v, want %v", have, want)
	}
	for _, tc := range []struct {
		name  string
		lanes []string
		want  []string
	}{
		{"all there", []string{"Work", "Get"}, nil},
		{"sub-benchmark of a listed benchmark", []string{"Get/size=10"}, nil},
		{"one missing", []string{"Work", "Put"}, []string{"Put"}},
		{"prefix is not enough", []string{"Wor"}, []string{"Wor"}},
		{"sub-benchmark of a missing benchmark", []string{"Put/size=10"}, []string{"Put/size=10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lanes []spec.Lane
			for _, n := range tc.lanes {
				lanes = append(lanes, spec.Lane{Name: n})
			}
			if got := missingLanes(lanes, have); !slices.Equal(got, tc.want) {
				t.Errorf("missingLanes = %v, want %v", got, tc.want)
			}
		})
	}
	if got, want := lanePhrase([]string{"Put"}), "lane Put (BenchmarkPut) is"; got != want {
		t.Errorf("lanePhrase = %q, want %q", got, want)
	}
	if got, want := lanePhrase([]string{"Put", "Del/x"}), "lanes Put, Del/x (BenchmarkPut, BenchmarkDel) are"; got != want {
		t.Errorf("lanePhrase = %q, want %q", got, want)
	}
}
