package lanekind

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseOutput(t *testing.T) {
	tests := []struct {
		name        string
		out         string
		want, drop  int
		unit        string
		wantSamples Samples
		wantErr     string
	}{
		{
			name:        "exec lines",
			out:         "BenchmarkA 1 100 ns/op\nBenchmarkA 1 110 ns/op 8 B/op\n",
			want:        2,
			wantSamples: Samples{Values: []float64{100, 110}, Unit: "ns/op", Metrics: map[string][]float64{"B/op": {8}}, Iters: []int{1, 1}, Lines: []int{1, 2}},
		},
		{
			name: "gotest output drops warmup",
			out: "goos: linux\ngoarch: amd64\npkg: x\nBenchmarkA-2 \t1\t 500 ns/op\nBenchmarkA-2 \t1000\t 90 ns/op\n" +
				"BenchmarkA-2 \t2000\t 95 ns/op\nPASS\nok  \tx\t0.01s\n",
			want: 2, drop: 1,
			wantSamples: Samples{Values: []float64{90, 95}, Unit: "ns/op", Iters: []int{1000, 2000},
				Config: map[string]string{"goos": "linux", "goarch": "amd64", "pkg": "x"}, Lines: []int{5, 6}},
		},
		{
			name:        "unit selects the metric",
			out:         "BenchmarkA 1 100 ns/op 7 rows\nBenchmarkA 1 100 ns/op 9 rows\n",
			want:        2,
			unit:        "rows",
			wantSamples: Samples{Values: []float64{7, 9}, Unit: "rows", Metrics: map[string][]float64{"ns/op": {100, 100}}, Iters: []int{1, 1}, Lines: []int{1, 2}},
		},
		{name: "too few", out: "BenchmarkA 1 100 ns/op\n", want: 2, wantErr: "printed 1 results, want 2"},
		{name: "too many", out: "BenchmarkA 1 1 ns/op\nBenchmarkA 1 1 ns/op\nBenchmarkA 1 1 ns/op\n", want: 2, wantErr: "printed 3 results, want 2"},
		{name: "too few with warmup", out: "BenchmarkA 1 1 ns/op\n", want: 2, drop: 3, wantErr: "printed 1 results, want 5 (3 warmup + 2 samples)"},
		{name: "garbage value", out: "BenchmarkA 1 100 ns/op\nBenchmarkA 1 1x0 ns/op\n", want: 2, wantErr: "output line 2: "},
		{name: "NaN", out: "BenchmarkA 1 NaN ns/op\n", want: 1, wantErr: "output line 1: A: ns/op is NaN"},
		{name: "negative time", out: "BenchmarkA 1 -4 ns/op\n", want: 1, wantErr: "output line 1: A: negative time -4 ns/op"},
		{name: "missing unit", out: "BenchmarkA 1 4 ns/op\n", want: 1, unit: "rows", wantErr: `output line 1: A: no "rows" metric`},
		{name: "nothing", out: "hello\n", want: 1, wantErr: "printed 0 results, want 1"},
		{name: "a unit twice", out: "BenchmarkA 1 100 ns/op 3 B/op 4 B/op\n", want: 1, wantErr: "output line 1: A: B/op given twice on one line"},
		{name: "another benchmark's results", out: "BenchmarkA 1 100 ns/op\nBenchmarkSomethingElse 1 100 ns/op\n", want: 2,
			wantErr: "output line 2: BenchmarkSomethingElse is not this lane's benchmark (want BenchmarkA)"},
		{name: "a longer name with the lane's as prefix", out: "BenchmarkAB 1 100 ns/op\n", want: 1,
			wantErr: "output line 1: BenchmarkAB is not this lane's benchmark (want BenchmarkA)"},
		{name: "a sub-benchmark of the lane", out: "BenchmarkA/size=10 1 100 ns/op\n", want: 1,
			wantErr: "output line 1: BenchmarkA/size=10 is not this lane's benchmark (want BenchmarkA)"},
		{name: "GOMAXPROCS suffix", out: "BenchmarkA-16 1 100 ns/op\n", want: 1,
			wantSamples: Samples{Values: []float64{100}, Unit: "ns/op", Iters: []int{1}, Lines: []int{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOutput([]byte(tt.out), "A", tt.want, tt.drop, tt.unit)
			if tt.wantErr != "" {
				if err == nil || len(err.Error()) < len(tt.wantErr) || err.Error()[:len(tt.wantErr)] != tt.wantErr {
					t.Fatalf("err = %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantSamples, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}
