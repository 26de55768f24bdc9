// Package report renders receipts: the markdown page of one run of an experiment, written
// beside its data folder, with provenance, per-pass tables, the drift check's verdicts,
// peak RSS, failed runs and warnings. Everything it shows is computed from a receipt
// loaded into memory (package loaded), so a receipt can be re-rendered at any time
// (Finish is idempotent). It reads no file: loading and verifying belong to package
// loaded, writing to the pipeline.
package report

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/analysis/incidence"
	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/internal/human"
	"github.com/flipbench/flipbench/internal/mdtable"
	"github.com/flipbench/flipbench/internal/shquote"
	"github.com/flipbench/flipbench/model/receipt"
)

// Render writes the receipt page. It returns the first error, a write error included.
func Render(w io.Writer, d *loaded.Receipt) error {
	ew := NewErrWriter(w)
	if err := render(ew, d); err != nil {
		return err
	}
	return ew.Err()
}

// render writes the receipt page to w, which remembers its first write error.
func render(w *ErrWriter, d *loaded.Receipt) error {
	p := d.Plan
	name := filepath.Base(d.Dir)
	fmt.Fprintf(w, "# Receipt: experiment %d, %s\n\n", p.Experiment, p.Label)
	fmt.Fprintf(w, "%s. Data: [`%s/`](%s/) (raw runs, one `.bench` file per arm, environment, drift analysis, manifest).\n", p.Title, name, name)
	fmt.Fprintf(w, "Re-check the numbers independently with `benchstat %s`.\n\n", benchArgs(name, p))
	shardNote(w, p)

	fmt.Fprintf(w, "## Provenance\n\n")
	if err := provenance(w, d); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n## Arms\n\n")
	if err := armsTable(w, p); err != nil {
		return err
	}
	if p.Merged() {
		fmt.Fprintf(w, "\n## Shards\n\n")
		if err := shardsTable(w, p); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\n## Drift check\n\n")
	fmt.Fprintf(w, "%s Negative deltas mean the candidate is better.\n\n", ConfigText(d.Analysis))
	if err := DriftMarkdown(w, d.Analysis, PlanRoles(d.Plan), DataValues(d)); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n## Per-pass medians\n\n")
	if err := passTable(w, d); err != nil {
		return err
	}
	if len(d.Looks) > 0 {
		fmt.Fprintf(w, "\n## Sequential looks\n\n")
		if err := LooksTable(w, d); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\n## Peak RSS\n\n")
	failed := failedRuns(d.Records)
	if len(failed) > 0 {
		fmt.Fprintf(w, "Over the successful runs only: failed runs (listed below) are left out.\n\n")
	}
	if err := RSSTable(w, d, p.ArmNames(), RSSMedianMax); err != nil {
		return err
	}
	if shares := SampleShares(d); len(shares) > 0 {
		fmt.Fprintf(w, "\n## Sample time\n\nThe recorded samples' share of process time: their sum over the sum of the processes' wall times (the rest is start-up, warmup, setup and a b.N ramp-up).\n\n")
		if err := SharesTable(w, d, shares); err != nil {
			return err
		}
	}
	if len(d.Analysis.Interference) > 0 {
		fmt.Fprintf(w, "\n## Waiting for a CPU\n\n%s\n\n", InterferenceIntro)
		if err := InterferenceTable(w, d.Analysis.Interference); err != nil {
			return err
		}
	}
	if _, err := MetricsSection(w, d, "\n## "); err != nil {
		return err
	}
	if Counted(p) {
		fmt.Fprintf(w, "\n## Instruction counts\n\n")
		if err := CountingTable(w, d); err != nil {
			return err
		}
	}
	if d.Profiles != nil && len(d.Profiles.Lanes) > 0 {
		fmt.Fprintf(w, "\n## Profiles\n\n")
		if err := ProfileSection(w, d, "### ", func(rel string) string { return name + "/" + rel }); err != nil {
			return err
		}
	}
	if d.Incidence != nil {
		fmt.Fprintln(w)
		if err := incidence.Markdown(w, d.Incidence); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\n## Failed runs\n\n")
		for _, r := range failed {
			fmt.Fprintf(w, "- collection %d pass %d, lane %s, arm %s (pid %d, exit %d): %s\n", r.Collection, r.Pass, r.Lane, r.Arm, r.PID, r.Exit, OneLine(r.Error))
			if r.StderrTail != "" {
				fmt.Fprintf(w, "  stderr: `%s`\n", OneLine(lastLine(r.StderrTail)))
			}
		}
	}
	leftover(w, d.Records)
	ws := Warnings(d)
	fmt.Fprintf(w, "\n## Warnings\n\n")
	if len(ws) == 0 {
		fmt.Fprintf(w, "None.\n")
	}
	for _, x := range ws {
		fmt.Fprintf(w, "- **%s**: %s\n", x.Stage, OneLine(x.Text))
	}
	return nil
}

// Warnings returns every warning of the receipt in one shape, by stage: those the build
// and the run kept (warnings.jsonl), the host's (env.json), the drift check's, the lane
// metrics' (nonzero) and the incidence report's findings.
func Warnings(d *loaded.Receipt) []receipt.Warning {
	out := slices.Clone(d.Kept)
	out = append(out, receipt.Warnings(receipt.StageHost, d.Env.HostWarnings())...)
	out = append(out, receipt.Warnings(receipt.StageAnalysis, d.Analysis.Warnings)...)
	out = append(out, receipt.Warnings(receipt.StageMetrics, NonZeroWarnings(d))...)
	out = append(out, receipt.Warnings(receipt.StageBenchmark, BenchtimeWarnings(d))...)
	if d.Incidence != nil {
		for _, f := range d.Incidence.Findings {
			out = append(out, receipt.Warning{Stage: receipt.StageIncidence, Text: f.Level + ": " + f.Message})
		}
	}
	return out
}

// leftover lists the runs that left processes running when they exited.
func leftover(w io.Writer, recs []receipt.Record) {
	first := true
	for _, r := range recs {
		if len(r.Leftover) == 0 {
			continue
		}
		if first {
			fmt.Fprintf(w, "\n## Processes left running\n\n")
			fmt.Fprintf(w, "These runs left processes running when they exited; flipbench ended them. A lane must wait for what it starts, or it competes with the runs after it.\n\n")
			first = false
		}
		fmt.Fprintf(w, "- collection %d pass %d, lane %s, arm %s (pid %d): %s\n", r.Collection, r.Pass, r.Lane, r.Arm, r.PID, OneLine(strings.Join(r.Leftover, "; ")))
		if r.Reaper != "" {
			fmt.Fprintf(w, "  (found by: %s)\n", r.Reaper)
		}
	}
}

func benchArgs(name string, p *receipt.Plan) string {
	var args []string
	for _, a := range p.Arms {
		args = append(args, name+"/"+a.Name+receipt.BenchExt)
	}
	return strings.Join(args, " ")
}

// runsText says how many runs were planned and recorded in words that agree: a fixed
// run's "72 planned, 72 recorded, 0 failed"; a sequential run's rounds against the most
// its rule allowed and why it stopped ("256 recorded in 2 of at most 10 rounds (stopped:
// the budget would be spent by another round), 0 failed; the rule allowed 1280 runs").
func runsText(d *loaded.Receipt) string {
	p := d.Plan
	failed := len(failedRuns(d.Records))
	s := p.Protocol.Sequential
	if s == nil {
		return fmt.Sprintf("%d planned, %d recorded, %d failed", len(p.Runs), len(d.Records), failed)
	}
	last, stopped := Stopped(d)
	if !stopped {
		return fmt.Sprintf("%s, %d failed, %s measured so far of at most %d (sequential, not stopped: resume it)",
			recordedText(d.Records), failed, human.Count(len(d.Looks), "round", "rounds"), s.MaxPairs)
	}
	why := map[string]string{receipt.StopDecided: "every lane the decision needs is decided", receipt.StopMaxPairs: "max-pairs reached",
		receipt.StopBudget:      "the " + s.Budget.String() + " budget would be spent by another round",
		receipt.StopUndecidable: "the lanes left cannot be decided within the budget at their noise"}[last.Stop]
	if why == "" {
		why = last.Stop
	}
	return fmt.Sprintf("%s in %d of at most %s (stopped: %s), %d failed; the rule allowed %d runs",
		recordedText(d.Records), last.Round, human.Count(s.MaxPairs, "round", "rounds"), why, failed, len(p.Runs))
}

// recordedText counts a sequential run's records, naming those that measured a set-aside
// pass again (they are beyond the runs the rule planned): "34 recorded (2 of them
// measured again)".
func recordedText(recs []receipt.Record) string {
	again := 0
	for _, r := range recs {
		if r.Attempt > 0 {
			again++
		}
	}
	if again == 0 {
		return fmt.Sprintf("%d recorded", len(recs))
	}
	return fmt.Sprintf("%d recorded (%d of them measured again)", len(recs), again)
}

func provenance(w io.Writer, d *loaded.Receipt) error {
	p := d.Plan
	passes := human.Count(p.Protocol.Passes, "pass", "passes")
	if s := p.Protocol.Sequential; s != nil {
		passes = fmt.Sprintf("up to %d passes (sequential: rounds of one pass pair per collection from %d, at most %d, budget %s)",
			p.Protocol.Passes, s.MinPairs, s.MaxPairs, s.Budget)
	}
	exp := fmt.Sprintf("%d (%s)", p.Experiment, p.Page)
	if p.Experiment == 0 && p.Page == "" {
		exp = fmt.Sprintf("none: a %s run, not an experiment page's", mdtable.OrDash(p.Label))
	}
	rows := [][]string{
		{"experiment", exp},
		{"command", "`" + shquote.Join(p.Command) + "`"},
		{"protocol", fmt.Sprintf("%s x %s, %s after %d warmup per run, seed %d, timeout %s",
			human.Count(p.Protocol.Collections, "collection", "collections"), passes,
			human.Count(p.Protocol.Samples, "sample", "samples"), p.Protocol.Warmup, p.Protocol.Seed, p.Protocol.Timeout)},
		{"runs", runsText(d)},
	}
	if pin := p.Protocol.Pinned(); pin != "" {
		rows = append(rows[:3], append([][]string{{"placement", pin + " (a Go lane's GOMAXPROCS is the number of its CPUs)"}}, rows[3:]...)...)
	}
	if len(d.Records) > 0 {
		first, last := d.Records[0].Started, d.Records[0].Ended
		for _, r := range d.Records {
			if r.Started.Before(first) {
				first = r.Started
			}
			if r.Ended.After(last) {
				last = r.Ended
			}
		}
		rows = append(rows, []string{"time", fmt.Sprintf("%s to %s (%s)", first.Format("2006-01-02 15:04:05Z"), last.Format("15:04:05Z"), last.Sub(first).Round(1e9))})
	}
	if len(d.Env.Snapshots) > 0 {
		s := d.Env.Snapshots[0]
		rows = append(rows,
			[]string{"host", hostsText(d.Env)},
			[]string{"governor", mdtable.OrDash(s.Governor)},
			[]string{"go", s.GoVersion},
			[]string{"load (1 min)", loadRange(d.Env)},
			[]string{"others' CPU", busyRange(d.Env)},
			[]string{"memory available", fmt.Sprintf("%s of %s at start", human.Bytes(float64(s.MemAvailBytes)), human.Bytes(float64(s.MemTotalBytes)))},
			[]string{"disk free", human.Bytes(float64(s.DiskFreeBytes)) + " at start"},
		)
	}
	return mdtable.Write(w, []string{"field", "value"}, rows)
}

// busyRange summarises the share of CPU other processes used, as measured over each pass
// (the "after" snapshots).
func busyRange(env receipt.Env) string {
	hi, sum, n := 0.0, 0.0, 0
	for _, s := range env.Snapshots {
		if s.When == "after" {
			hi = math.Max(hi, s.BusyPct)
			sum += s.BusyPct
			n++
		}
	}
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%s on average, %s at most (share of all CPUs used by other processes, measured over each of %d passes)", human.Percent(sum/float64(n)), human.Percent(hi), n)
}

func loadRange(env receipt.Env) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range env.Snapshots {
		lo, hi = math.Min(lo, s.Load1), math.Max(hi, s.Load1)
	}
	return fmt.Sprintf("%s to %s over %d snapshots", human.Sig(lo), human.Sig(hi), len(env.Snapshots))
}

func armsTable(w io.Writer, p *receipt.Plan) error {
	var rows [][]string
	for _, a := range p.Arms {
		env := strings.Join(a.Env, " ")
		rows = append(rows, []string{a.Name, a.Source, "`" + receipt.ShortHash(a.SHA256) + "`", mdtable.OrDash(env), "`" + shquote.Join(append(append([]string{}, a.Command...), a.Args...)) + "`"})
	}
	return mdtable.Write(w, []string{"arm", "source", "sha256", "env", "command"}, rows)
}

// passTable shows, per lane and pass, each arm's median and each candidate's delta and CVs.
func passTable(w io.Writer, d *loaded.Receipt) error {
	header := []string{"lane", "coll", "pass", "order", "arm", "base median", "cand median", "delta", "base CV", "cand CV", "note"}
	vals := DataValues(d)
	var rows [][]string
	for _, pd := range d.Analysis.Passes {
		note := pd.Note
		if pd.Contaminated {
			note = joinNote(note, "contaminated ("+pd.Flagged+" noisy)")
		}
		if pd.HostBlip {
			note = joinNote(note, "host blip")
		}
		if !pd.Usable {
			rows = append(rows, []string{pd.Lane, itoa(pd.Collection), itoa(pd.Pass), pd.Order, pd.Arm, "-", "-", "-", "-", "-", note})
			continue
		}
		rows = append(rows, []string{pd.Lane, itoa(pd.Collection), itoa(pd.Pass), pd.Order, pd.Arm,
			human.Value(pd.BaseMedian, vals.Unit(pd.Lane)), human.Value(pd.CandMedian, vals.Unit(pd.Lane)), human.Delta(pd.DeltaPct),
			human.Percent(pd.BaseCVPct), human.Percent(pd.CandCVPct), note})
	}
	return mdtable.Write(w, header, rows)
}

func failedRuns(recs []receipt.Record) []receipt.Record {
	var out []receipt.Record
	for _, r := range recs {
		if !r.OK() {
			out = append(out, r)
		}
	}
	return out
}

func itoa(n int) string { return fmt.Sprint(n) }

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// hostsText describes the hosts of a receipt's snapshots: one, or every distinct one of a
// merged receipt's shards.
func hostsText(env receipt.Env) string {
	var hosts []string
	for _, s := range env.Snapshots {
		h := fmt.Sprintf("%s, %s, %d CPUs, kernel %s", s.Hostname, mdtable.OrDash(s.CPUModel), s.CPUs, mdtable.OrDash(s.Kernel))
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return strings.Join(hosts, "; ")
}

// shardNote says what part of a run a shard receipt holds, or that a receipt merges
// shards; nothing for a run on one machine.
func shardNote(w io.Writer, p *receipt.Plan) {
	sh := p.Shard
	switch {
	case p.Part():
		var pairs []string
		for _, pr := range sh.Pairs {
			pairs = append(pairs, pr.String())
		}
		fmt.Fprintf(w, "This receipt is %s of a run spread over machines: the pass pairs %s, lanes %s. "+
			"The other pairs are in the other shards' receipts and show as insufficient here; "+
			"`flipbench merge` joins the shards into the run's receipt (docs/shards.md).\n\n",
			sh.Name(), strings.Join(pairs, ", "), strings.Join(sh.Lanes, ", "))
	case p.Merged():
		fmt.Fprintf(w, "This receipt merges %s (`flipbench merge`, docs/shards.md): each pass pair ran whole on one machine, named under Shards.\n\n",
			human.Count(len(sh.Sources), "shard receipt", "shard receipts"))
	}
}

// shardsTable lists the shard receipts a merged receipt joins.
func shardsTable(w io.Writer, p *receipt.Plan) error {
	var rows [][]string
	for _, src := range p.Shard.Sources {
		sh := receipt.Shard{Index: src.Index, Count: src.Count, FromRound: src.FromRound, ToRound: src.ToRound}
		var pairs []string
		for _, pr := range src.Pairs {
			pairs = append(pairs, fmt.Sprintf("c%d p%d", pr.Collection, pr.Round))
		}
		rows = append(rows, []string{sh.Name(), "`" + src.Receipt + "`", "`" + receipt.ShortHash(src.ManifestSHA256) + "`",
			strings.Join(pairs, ", "), itoa(src.Runs), strings.Join(src.Hosts, "; ")})
	}
	return mdtable.Write(w, []string{"shard", "receipt", "manifest sha256", "pass pairs (collection, pair)", "runs", "host"}, rows)
}
