package receipt

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/testkit/seeds"
)

// headLines returns the first n lines of b.
func headLines(b []byte, n int) []byte {
	end := 0
	for range n {
		i := bytes.IndexByte(b[end:], '\n')
		if i < 0 {
			return b
		}
		end += i + 1
	}
	return b[:end]
}

// FuzzParseRecords feeds raw.jsonl contents to the parser the run loop and resume use:
// nothing may crash it, the valid prefix it reports parses again to the same records,
// and only a last line without its newline is ever dropped.
func FuzzParseRecords(f *testing.F) {
	raws, err := seeds.Files(seeds.Repo("results/*/raw.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range raws {
		head := headLines(r, 1) // a large input slows the fuzzer's mutations to a crawl
		f.Add(head)
		f.Add(append(bytes.Clone(head), `{"collection":1,"pa`...)) // torn by a kill
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, good, err := parseRecords("raw.jsonl", data)
		if err != nil {
			return
		}
		if good < 0 || good > len(data) || (good > 0 && data[good-1] != '\n') {
			t.Fatalf("valid prefix %d of %d bytes", good, len(data))
		}
		if bytes.IndexByte(data[good:], '\n') >= 0 {
			t.Fatalf("a complete line after the valid prefix was dropped: %q", data[good:])
		}
		again, good2, err := parseRecords("raw.jsonl", data[:good])
		if err != nil || good2 != good || len(again) != len(recs) {
			t.Fatalf("the valid prefix does not parse again: %d records, %v", len(again), err)
		}
		for _, r := range recs {
			b, err := json.Marshal(r)
			if err != nil {
				continue // a time beyond year 9999 parses but does not print
			}
			var back Record
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("a record does not survive a round trip: %v", err)
			}
		}
	})
}

// FuzzPlan feeds plan.json contents to ReadPlan's validation: nothing may crash it, and a
// plan it accepts schedules every (collection, pass, lane, arm) exactly once, so the run
// loop can trust it.
func FuzzPlan(f *testing.F) {
	plans, err := seeds.Files(seeds.Repo("results/*/plan.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range plans {
		// The committed plans, cut to their first pass pair of one collection: a large
		// input slows the fuzzer's mutations to a crawl.
		var p Plan
		if err := json.Unmarshal(b, &p); err != nil {
			f.Fatal(err)
		}
		p.Protocol.Collections, p.Protocol.Passes = 1, 2
		p.Lanes = p.Lanes[:min(len(p.Lanes), 2)]
		p.Runs = nil
		for pass := 1; pass <= 2; pass++ {
			order, arms := driftcheck.OrderForward, p.Arms
			if pass == 2 {
				order, arms = driftcheck.OrderReverse, slices.Clone(p.Arms)
				slices.Reverse(arms)
			}
			for _, l := range p.Lanes {
				for _, a := range arms {
					p.Runs = append(p.Runs, Run{Collection: 1, Pass: pass, Order: order, Lane: l.Name, Arm: a.Name})
				}
			}
		}
		if err := p.Validate(); err != nil {
			f.Fatalf("a cut plan: %v", err)
		}
		small, _ := json.Marshal(p)
		f.Add(small)
	}
	small, _ := json.Marshal(validPlan())
	f.Add(small)
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Plan
		if json.Unmarshal(data, &p) != nil || p.Validate() != nil {
			return
		}
		want := p.Protocol.Collections * p.Protocol.Passes * len(p.Lanes) * len(p.Arms)
		seen := map[Key]bool{}
		for _, r := range p.Runs {
			if seen[r.Key()] {
				t.Fatalf("run %+v scheduled twice", r.Key())
			}
			seen[r.Key()] = true
		}
		if len(seen) != want {
			t.Fatalf("%d runs scheduled, the protocol makes %d", len(seen), want)
		}
	})
}

// FuzzManifest feeds manifest.json contents to VerifyManifest and VerifyPage over a small
// receipt folder: nothing may crash them, and a manifest they accept lists exactly the
// folder's files with their hashes.
func FuzzManifest(f *testing.F) {
	manifests, err := seeds.Files(seeds.Repo("results/*/manifest.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range manifests {
		// Each committed manifest cut to two entries: a large input slows the fuzzer's
		// mutations to a crawl.
		var m Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			f.Fatal(err)
		}
		cut := Manifest{Files: map[string]string{}, Page: m.Page}
		for _, name := range sortedKeys(m.Files)[:min(2, len(m.Files))] {
			cut.Files[name] = m.Files[name]
		}
		small, _ := json.Marshal(cut)
		f.Add(small)
	}
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, PlanFile), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, RawFile), []byte(""), 0o644)
	good, err := Folder(dir).Seal([]byte("# Receipt\n"))
	if err != nil {
		f.Fatal(err)
	}
	b, _ := json.Marshal(good)
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, ManifestFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		err := VerifyManifest(dir)
		VerifyPage(dir)
		if err != nil {
			return
		}
		var m Manifest
		if json.Unmarshal(data, &m) != nil {
			t.Fatalf("VerifyManifest accepted a manifest that does not parse")
		}
		if len(m.Files) != len(good.Files) {
			t.Fatalf("accepted a manifest of %d files for a folder of %d", len(m.Files), len(good.Files))
		}
		for name, sum := range good.Files {
			if !strings.EqualFold(m.Files[name], sum) || m.Files[name] != sum {
				t.Fatalf("accepted %s with sha256 %q, the file's is %s", name, m.Files[name], sum)
			}
		}
	})
}
