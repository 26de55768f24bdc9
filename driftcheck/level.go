package driftcheck

// The levels intervals are stated at. Every interval the analysis reports is a repeated
// confidence interval (Jennison and Turnbull, ch. 9): its bounds are one-sided tests of
// the rule, each erring at most its error rate over all the rule's looks together (the
// Design spends it over them), so the interval holds at every look at once, whichever look
// a lane stopped at. The level of each look's interval alone (LaneSummary.Confidence) is
// higher and differs between lanes and looks; it is kept for the JSON, not for a reader.

// alpha is the configuration's error rate, the default's when unset.
func (c Config) alpha() float64 {
	if c.Alpha > 0 && c.Alpha < 1 {
		return c.Alpha
	}
	return DefaultConfig().Alpha
}

// Level is the level of the pooled intervals, valid at every look: each bound is a
// one-sided test at Alpha, so 1 - 2 Alpha (90% by default).
func (c Config) Level() float64 { return 1 - 2*c.alpha() }

// CollectionLevel is the level of one collection's interval, valid at every look: its
// bounds are the replication tests, one-sided at Alpha/2 each, so 1 - Alpha (95% by
// default).
func (c Config) CollectionLevel() float64 { return 1 - c.alpha() }

// SequenceLevel is the level of a confidence sequence (a continued run's intervals),
// valid at any number of pairs: two-sided at Alpha, so 1 - Alpha.
func (c Config) SequenceLevel() float64 { return 1 - c.alpha() }

// LevelOf is the level, valid at every look, of summaries s: CollectionLevel for one
// collection's, Level for the pooled ones (Collection 0).
func (c Config) LevelOf(s LaneSummary) float64 {
	if s.Collection > 0 {
		return c.CollectionLevel()
	}
	return c.Level()
}
