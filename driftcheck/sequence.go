package driftcheck

import "math"

// Confidence sequences: intervals valid at every number of pairs at once, for a run that
// continues an earlier run's pairs (flipbench gate --continue). A group-sequential design
// spends its error rate over looks planned in advance; a rerun that added pairs and tested
// again on fresh looks would spend it a second time. A confidence sequence instead bounds
// the chance that the interval ever misses the true effect, over any number of pairs and
// looks, so a lane can be continued as often as needed at one stated error rate.
//
// The boundary is Robbins' normal mixture (Howard, Ramdas, McAuliffe and Sekhon, 2021,
// "Time-uniform, nonparametric, nonasymptotic confidence sequences", eq. (14)): for a sum
// S_n of n pass deltas with variance V = n sigma^2, P(exists n: |S_n - n mu| >=
// sqrt((V + rho) log((V + rho) / (rho alpha^2)))) <= alpha. rho = tuned sigma^2 tunes the
// boundary to the number of pairs a run expects (among normal mixtures, it is the one
// that is tightest about there); in standard errors of the mean it is
// sqrt((1 + 1/r) log((1 + r) / alpha^2)) at r = n / tuned: about 3.7 at r = 1 and
// alpha = 0.05, where a fixed test uses 1.96, and it widens far below the tuned size and,
// slowly, far beyond it.

// SequenceCrit returns the critical value, in standard errors, of a two-sided confidence
// sequence at error rate alpha after n pairs, tuned to tuned pairs. sigma
// is estimated with df degrees of freedom: the value is scaled by the ratio of the t and
// normal quantiles at alpha, as a fixed interval would be, so that a small sample's
// underestimated noise does not narrow it. It returns +Inf when n < 1 or alpha is not in
// (0, 1).
func SequenceCrit(alpha float64, n, tuned int, df float64) float64 {
	if n < 1 || !(alpha > 0 && alpha < 1) {
		return math.Inf(1)
	}
	r := float64(n) / float64(max(tuned, 1))
	crit := math.Sqrt((1 + 1/r) * math.Log((1+r)/(alpha*alpha)))
	if df > 0 {
		crit *= tCritical(alpha/2, df) / -zQuantile(alpha/2)
	}
	return crit
}
