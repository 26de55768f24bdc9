package receipt

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
)

// Shard says which part of a run a receipt holds when the run is spread over machines
// (flipbench ab --shard i/n; docs/shards.md). A pass pair runs whole on one machine;
// different pairs need not. A shard receipt (Index 1 to Count) holds the pairs dealt to
// one machine in one stage: a fixed protocol has one stage, every pair; a sequential run
// has a first stage of the rounds before its first look and then one stage after each
// merge, for the lanes the merged looks left pending. A merged receipt (flipbench merge;
// Index 0) names the shard receipts it joins in Sources. Everything else in the plan is
// the same in every shard and in the merge: the protocol, the arms with their binaries'
// hashes, the lanes and the whole schedule.
type Shard struct {
	// Index is the shard's number, 1 to Count; 0 in a merged receipt.
	Index int `json:"index"`
	// Count is how many shards the stage was dealt to; in a merged receipt, how many
	// shard receipts it joins.
	Count int `json:"count"`
	// FromRound and ToRound are the stage's rounds (pass pairs per collection): every
	// round of a fixed protocol.
	FromRound int `json:"from_round,omitempty"`
	ToRound   int `json:"to_round,omitempty"`
	// Lanes are the lanes the stage runs: every lane in a first stage, the lanes the
	// merged looks left pending in a later one.
	Lanes []string `json:"lanes,omitempty"`
	// Pairs are the pass pairs dealt to this shard, in the schedule's order.
	Pairs []Pair `json:"pairs,omitempty"`
	// Continues names the merged receipt whose last look this stage continues (its data
	// folder's name) and the SHA-256 of its manifest; empty in a first stage.
	Continues       string `json:"continues,omitempty"`
	ContinuesSHA256 string `json:"continues_sha256,omitempty"`
	// Sources are the shard receipts a merged receipt joins.
	Sources []ShardSource `json:"sources,omitempty"`
	// Missing are the pass pairs a merged receipt lacks because the shards holding them
	// were not merged: the receipt cannot settle the experiment (decide calls it
	// under-powered).
	Missing []Pair `json:"missing,omitempty"`
}

// Pair is one pass pair: passes 2k-1 and 2k of a collection (k is the round).
type Pair struct {
	Collection int `json:"collection"`
	Round      int `json:"pair"`
}

// String formats the pair as "collection 1 pair 2".
func (p Pair) String() string { return fmt.Sprintf("collection %d pair %d", p.Collection, p.Round) }

// PairOf returns the pass pair of a run's collection and pass.
func PairOf(collection, pass int) Pair { return Pair{collection, Round(pass)} }

// ShardSource is one shard receipt joined into a merged receipt.
type ShardSource struct {
	// Receipt is the shard receipt's data folder name, ManifestSHA256 the SHA-256 of its
	// manifest.json when it was merged.
	Receipt        string `json:"receipt"`
	ManifestSHA256 string `json:"manifest_sha256"`
	Index          int    `json:"index"`
	Count          int    `json:"count"`
	FromRound      int    `json:"from_round"`
	ToRound        int    `json:"to_round"`
	Pairs          []Pair `json:"pairs"`
	// Hosts are the machines its host snapshots name (one, unless it was resumed
	// elsewhere), each as "hostname: fingerprint".
	Hosts []string `json:"hosts"`
	// Runs is how many of its runs the merged receipt holds.
	Runs int `json:"runs"`
}

// Part reports whether the plan is one shard of a run (not a whole run, not a merge).
func (p *Plan) Part() bool { return p.Shard != nil && p.Shard.Index > 0 }

// Merged reports whether the plan is a merged receipt's.
func (p *Plan) Merged() bool { return p.Shard != nil && p.Shard.Index == 0 }

// Name names a shard and its stage: "shard 1/2", or "shard 1/2 of rounds 3-4" for a
// later stage of a sequential run.
func (s *Shard) Name() string {
	name := fmt.Sprintf("shard %d/%d", s.Index, s.Count)
	if s.FromRound > 1 {
		name += " of " + RoundsText(s.FromRound, s.ToRound)
	}
	return name
}

// RoundsText formats a range of rounds: "round 3" or "rounds 3-4".
func RoundsText(from, to int) string {
	if from == to {
		return fmt.Sprintf("round %d", from)
	}
	return fmt.Sprintf("rounds %d-%d", from, to)
}

// Has reports whether run r belongs to the shard: one of its pairs, one of its lanes.
func (s *Shard) Has(r Run) bool {
	return slices.Contains(s.Pairs, PairOf(r.Collection, r.Pass)) && slices.Contains(s.Lanes, r.Lane)
}

// Runs returns the runs of plan p that the shard measures, in the schedule's order.
func (s *Shard) Runs(p *Plan) []Run {
	var out []Run
	for _, r := range p.Runs {
		if s.Has(r) {
			out = append(out, r)
		}
	}
	return out
}

// validate checks a plan's shard against the plan.
func (s *Shard) validate(p *Plan) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("shard: "+format, args...)) }
	if s.Index == 0 {
		if len(s.Sources) == 0 || s.Count != len(s.Sources) {
			bad("a merged receipt (index 0) names %d sources, count says %d", len(s.Sources), s.Count)
		}
		return errors.Join(errs...)
	}
	rounds := p.Protocol.Passes / 2
	switch {
	case s.Count < 1 || s.Index < 1 || s.Index > s.Count:
		bad("index %d of %d: want 1 <= index <= count", s.Index, s.Count)
	case s.FromRound < 1 || s.FromRound > s.ToRound || s.ToRound > rounds:
		bad("rounds %d to %d: the protocol has rounds 1 to %d", s.FromRound, s.ToRound, rounds)
	case len(s.Lanes) == 0:
		bad("no lanes")
	case len(s.Sources) > 0:
		bad("a shard of a run (index %d) names sources", s.Index)
	}
	for _, l := range s.Lanes {
		if !slices.ContainsFunc(p.Lanes, func(pl Lane) bool { return pl.Name == l }) {
			bad("lane %q is not in the plan", l)
		}
	}
	seen := map[Pair]bool{}
	for _, pr := range s.Pairs {
		switch {
		case pr.Collection < 1 || pr.Collection > p.Protocol.Collections || pr.Round < s.FromRound || pr.Round > s.ToRound:
			bad("%s is outside the stage (%s, %d collections)", pr, RoundsText(s.FromRound, s.ToRound), p.Protocol.Collections)
		case seen[pr]:
			bad("%s listed twice", pr)
		}
		seen[pr] = true
	}
	return errors.Join(errs...)
}

// ShardOf returns the shard of the receipt in data folder dir (nil for a whole run), from
// its plan.json, without validating the plan.
func ShardOf(dir string) (*Shard, error) {
	var p struct {
		Shard *Shard `json:"shard"`
	}
	if err := ReadJSON(filepath.Join(dir, PlanFile), &p); err != nil {
		return nil, err
	}
	return p.Shard, nil
}
