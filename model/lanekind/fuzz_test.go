package lanekind

import (
	"bufio"
	"bytes"
	"math"
	"path"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/internal/testkit/seeds"
)

// FuzzParseOutput feeds lane output to ParseOutput: no output may crash it, and output it
// accepts yields exactly the samples asked for, each finite, with every extra metric
// given once per sample at most.
func FuzzParseOutput(f *testing.F) {
	// The result lines the testscripts' lane programs print, and gotest output.
	scripts, err := seeds.ScriptFiles(seeds.ScriptDir, func(name string) bool { return path.Ext(name) == ".sh" })
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range scripts {
		sc := bufio.NewScanner(bytes.NewReader(s))
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "Benchmark"); i >= 0 {
				line := strings.Trim(sc.Text()[i:], `"'`)
				f.Add([]byte(line+"\n"+line+"\n"), "Work", 2, 0, "")
			}
		}
	}
	f.Add([]byte("goos: linux\nBenchmarkA-2 \t1\t 500 ns/op\nBenchmarkA-2 \t1\t 90 ns/op 8 B/op 2 allocs/op\nPASS\n"), "A", 1, 1, "")
	f.Add([]byte("BenchmarkA 1 100 ns/op 7 rows\nBenchmarkA 1 100 ns/op 9 rows\n"), "A", 2, 0, "rows")
	f.Add([]byte("BenchmarkGet/size=10-4 1 5 ns/op\n"), "Get/size=10", 1, 0, "ns/op")
	f.Add([]byte("BenchmarkA 1 NaN ns/op\nBenchmarkA 1 -4 ns/op\nBenchmarkA 1 +Inf x\n"), "A", 3, 0, "")
	f.Fuzz(func(t *testing.T, out []byte, lane string, want, drop int, unit string) {
		if want < 0 || want > 1000 || drop < 0 || drop > 1000 {
			return
		}
		s, err := ParseOutput(out, lane, want, drop, unit)
		if err != nil {
			return
		}
		if len(s.Values) != want {
			t.Fatalf("%d values, want %d", len(s.Values), want)
		}
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite value %v", v)
			}
		}
		for u, vs := range s.Metrics {
			if len(vs) > want {
				t.Fatalf("metric %s: %d values for %d samples", u, len(vs), want)
			}
		}
	})
}
