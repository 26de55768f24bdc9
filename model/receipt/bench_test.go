package receipt

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/perf/benchfmt"
)

// TestWriteBench checks that an arm's .bench file reads back, with benchfmt, as what go
// test -bench -benchmem printed: its configuration lines, each sample's iteration count
// and every metric, and that no value is written in e-notation.
func TestWriteBench(t *testing.T) {
	dir := t.TempDir()
	plan := &Plan{Experiment: 7, Stamp: "2026-12-01T00-00-00Z",
		Arms: []Arm{{Name: "base"}, {Name: "cand"}},
		Runs: []Run{{Collection: 1, Pass: 1, Lane: "Get", Arm: "base"}, {Collection: 1, Pass: 1, Lane: "Get", Arm: "cand"}}}
	cfg := map[string]string{"goos": "linux", "goarch": "amd64", "pkg": "example.com/btree", "cpu": "Test CPU @ 2.00GHz"}
	recs := []Record{
		{Collection: 1, Pass: 1, Lane: "Get", Arm: "base", Unit: "ns/op", Samples: []float64{1.71e5, 1.2e6}, Iters: []int{7021, 1000},
			Metrics: map[string][]float64{"B/op": {48, 2e6}, "allocs/op": {1, 3}}, Config: cfg},
		{Collection: 1, Pass: 1, Lane: "Get", Arm: "cand", Unit: "ns/op", Samples: []float64{0.25, 3e9}, Config: cfg},
	}
	if _, err := Folder(dir).WriteBench(plan, recs); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "base.bench"))
	if err != nil {
		t.Fatal(err)
	}
	want := "goos: linux\ngoarch: amd64\npkg: example.com/btree\ncpu: Test CPU @ 2.00GHz\nexperiment: 7\nreceipt: 2026-12-01T00-00-00Z\n" +
		"BenchmarkGet\t7021\t171000 ns/op\t48 B/op\t1 allocs/op\n" +
		"BenchmarkGet\t1000\t1200000 ns/op\t2000000 B/op\t3 allocs/op\n"
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("base.bench (-want +got):\n%s", diff)
	}

	type line struct {
		Name  string
		Iters int
		Vals  map[string]float64
		Cfg   map[string]string
	}
	var got []line
	r := benchfmt.NewReader(bytes.NewReader(data), "base.bench")
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			t.Fatalf("not a result: %v", r.Result())
		}
		l := line{Name: string(res.Name.Full()), Iters: res.Iters, Vals: map[string]float64{}, Cfg: map[string]string{}}
		for _, v := range res.Values {
			l.Vals[v.OrigUnit+v.Unit] = v.OrigValue + v.Value
		}
		for _, c := range res.Config {
			l.Cfg[c.Key] = string(c.Value)
		}
		got = append(got, l)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Iters != 7021 || got[1].Vals["B/op"] != 2e6 || got[0].Cfg["cpu"] != cfg["cpu"] || got[0].Cfg["pkg"] != cfg["pkg"] {
		t.Errorf("read back %+v", got)
	}

	cand, err := os.ReadFile(filepath.Join(dir, "cand.bench"))
	if err != nil {
		t.Fatal(err)
	}
	// A record of an older receipt has no iteration counts: 1, as before.
	if !bytes.Contains(cand, []byte("BenchmarkGet\t1\t0.25 ns/op\nBenchmarkGet\t1\t3000000000 ns/op\n")) {
		t.Errorf("cand.bench:\n%s", cand)
	}
	if e := regexp.MustCompile(`[0-9]e[-+]?[0-9]`); e.Match(data) || e.Match(cand) {
		t.Errorf("e-notation in a .bench file:\n%s\n%s", data, cand)
	}
}

// TestWriteBenchVaryingConfig checks that a configuration key a lane prints with another
// value in every process (pid: N) is left out of the .bench files, so that benchstat
// reads each lane of each file as one set of samples, while a key that is constant for a
// lane (even if other lanes lack it) is kept; raw records keep every key.
func TestWriteBenchVaryingConfig(t *testing.T) {
	dir := t.TempDir()
	plan := &Plan{Experiment: 7, Stamp: "s", Arms: []Arm{{Name: "base"}, {Name: "cand"}}}
	var recs []Record
	pid := 100
	for pass := 1; pass <= 2; pass++ {
		for _, lane := range []string{"Get", "Put"} {
			for _, arm := range []string{"base", "cand"} {
				pid++
				cfg := map[string]string{"goos": "linux", "pid": strconv.Itoa(pid)}
				if lane == "Put" {
					cfg["shards"] = "4"
				}
				plan.Runs = append(plan.Runs, Run{Collection: 1, Pass: pass, Lane: lane, Arm: arm})
				recs = append(recs, Record{Collection: 1, Pass: pass, Lane: lane, Arm: arm, Unit: "ns/op", Samples: []float64{100}, Iters: []int{10}, Config: cfg})
			}
		}
	}
	if _, err := Folder(dir).WriteBench(plan, recs); err != nil {
		t.Fatal(err)
	}
	for _, arm := range []string{"base", "cand"} {
		data, err := os.ReadFile(filepath.Join(dir, arm+".bench"))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("pid:")) {
			t.Errorf("%s.bench keeps the varying pid:\n%s", arm, data)
		}
		cfgs := map[string]map[string]bool{}
		r := benchfmt.NewReader(bytes.NewReader(data), arm)
		for r.Scan() {
			res, ok := r.Result().(*benchfmt.Result)
			if !ok {
				continue
			}
			var kv []string
			for _, c := range res.Config {
				kv = append(kv, c.Key+"="+string(c.Value))
			}
			name := string(res.Name.Full())
			if cfgs[name] == nil {
				cfgs[name] = map[string]bool{}
			}
			cfgs[name][strings.Join(kv, " ")] = true
		}
		if len(cfgs["Get"]) != 1 || len(cfgs["Put"]) != 1 {
			t.Errorf("%s.bench: configurations per lane %v, want one each", arm, cfgs)
		}
		for c := range cfgs["Put"] {
			if !strings.Contains(c, "shards=4") {
				t.Errorf("%s.bench: Put's configuration %q lost its constant shards key", arm, c)
			}
		}
	}
	if recs[0].Config["pid"] == "" {
		t.Error("the record lost its pid")
	}
}
