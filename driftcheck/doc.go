// Package driftcheck turns the raw samples of an order-flipped A/B run into pass-pair
// verdicts, per-lane summaries and warnings. It is pure statistics: no I/O, no clock, no
// randomness and no mutable state of its own; the same Input always yields the same Report.
//
// # The run it expects
//
// An experiment measures a base arm and one or more candidate arms on several lanes. Each
// collection holds an even number of passes; pass p runs every lane of every arm once, in
// forward order (base first) when p is odd and in reverse order (candidates first) when p
// is even. Passes 2k-1 and 2k form pass-pair k, the unit of the drift check. Each run is
// one fresh process and contributes the raw per-sample values of one lane and one arm: an
// Observation.
//
// # Per pass
//
// For every pass, lane and candidate, Analyze computes
//
//	delta% = (median(cand) - median(base)) / |median(base)| x 100
//
// or, for lanes whose unit is higher-is-better, the change of the reciprocal,
//
//	delta% = (median(base) - median(cand)) / |median(cand)| x 100
//
// so a negative delta always means the candidate is better ("faster"), a rate lane reads
// the delta of the time lane of the same work, and a base rate of 0 against a candidate
// that delivers is -100% (see DeltaPct). It also computes each side's robust
// coefficient of variation,
//
//	CV% = 1.4826 x MAD / |median| x 100,  MAD = median(|x - median(x)|)
//
// over the raw samples of that one process run. The factor 1.4826 makes the scaled MAD
// estimate the standard deviation of normal data, so for well-behaved samples the robust
// CV matches the classic one; unlike it, a few outliers barely move it. The clean-CV
// threshold applies to this per-run, per-sample CV (raw values within one process), not
// to a CV of per-run medians, which is far smaller: a threshold tuned on one silently
// stops working on the other.
//
// A pass is contaminated when its flagged side (the candidate when delta >= 0, else the
// base: the side whose slowness produced the delta) is noisy while the other side is
// quiet: flagged CV > Config.CleanCVPct, and the clean side's CV is 0 or
// flagged CV / clean CV >= Config.CVAsymmetry.
//
// # Per pass-pair
//
// The pair verdict is the first rule that applies:
//
//  1. fewer than 2 samples on any side of either pass, or a zero median that leaves the
//     delta (a zero denominator) or a CV (a zero median with spread) undefined: Insufficient
//  2. either pass contaminated: DriftSuspected
//  3. both |delta| >= Config.EffectFloorPct with opposite signs: DriftSuspected
//  4. both |delta| >= the floor with the same sign: Reproduced
//  5. exactly one |delta| >= the floor: OneSided
//  6. otherwise: Neutral
//
// Every verdict carries a reason that states the numbers, for example
// "both passes faster beyond the 3% floor: -12.1% then -9.8%" (forward pass first) or
// "pass 4 contaminated: candA CV 31% vs base 4.0% (deltas -1.2% then +6.5%)". Pass numbers
// in reasons and warnings count within the collection, as in Observation.Pass.
//
// # Per lane, candidate and collection
//
// A LaneSummary reports the median and the mean of the usable per-pass deltas side by side
// (a host blip moves the mean, not the median), how many passes were faster, the pair
// verdict counts, a Mann-Whitney U p-value over all samples of the usable passes pooled
// (benchmath.AssumeNothing.Compare) and each side's pooled median with a 95% confidence
// interval (benchmath.AssumeNothing.Summary).
//
// A pass is a host blip when, with at least 3 usable passes,
//
//	|delta - median(deltas)| > max(3 x 1.4826 x MAD(deltas), 2 x floor)
//
// that is, far outside the lane's own pass-to-pass spread and at least two floors away
// from its median. Blips are flagged and warned about; they do not change pair verdicts,
// and the lane verdict uses the median delta, which they barely move.
//
// The lane verdict (LaneVerdict) is the first rule that applies, with N pairs in the
// collection, of which U are usable (not insufficient):
//
//  1. 2U < N (more than half the pairs lack data), or no usable pass: LaneInsufficient
//  2. REPRODUCED-faster pairs > N/2, no REPRODUCED-slower pair, and the median pass delta
//     <= -floor: LaneReproducedFaster (and symmetrically LaneReproducedSlower)
//  3. drift-suspected pairs >= U/2: LaneDrift
//  4. |median pass delta| < floor: LaneNeutral
//  5. otherwise (material median, but pairs that do not reproduce in one direction):
//     LaneMixed
//
// The majority is counted over all N pairs, so insufficient pairs count against a
// reproduction, never for it.
//
// # Warnings
//
// Problems in the data are returned as Report.Warnings, each naming the lane, arm,
// collection and pass or pair and saying what to do: missing or short runs, fewer than 6
// samples per run (each pass delta compares the medians of two runs' samples and each CV
// is computed over one run's samples: per-pass medians and CVs from so few samples are
// shaky), non-finite samples, contaminated passes and host blips. Analyze returns an error only for
// malformed input: an invalid protocol (no lanes or candidates, an odd pass count), an
// unknown lane or arm, a collection or pass out of range, a duplicate observation or an
// invalid configuration.
package driftcheck
