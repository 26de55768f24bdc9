package armbuild

import (
	"slices"
	"testing"

	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/spec"
)

func TestMissingLanes(t *testing.T) {
	kind, err := lanekind.Lookup(lanekind.Gotest)
	if err != nil {
		t.Fatal(err)
	}
	have := kind.Lanes([]byte("BenchmarkWork\nBenchmarkGet\nTestNotABenchmark\n\nExampleX\n"))
	if want := []string{"Work", "Get"}; !slices.Equal(have, want) {
		t.Fatalf("Lanes = %v, want %v", have, want)
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
			if got := missingLanes(kind, lanes, have); !slices.Equal(got, tc.want) {
				t.Errorf("missingLanes = %v, want %v", got, tc.want)
			}
		})
	}
	if got, want := lanePhrase([]string{"Put"}), "lane Put is"; got != want {
		t.Errorf("lanePhrase = %q, want %q", got, want)
	}
	if got, want := lanePhrase([]string{"Put", "Del/x"}), "lanes Put, Del/x are"; got != want {
		t.Errorf("lanePhrase = %q, want %q", got, want)
	}
}
