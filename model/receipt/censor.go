package receipt

import "strings"

// perOpSeconds are the time-per-operation units a lane may print, in seconds.
var perOpSeconds = map[string]float64{"ns/op": 1e-9, "us/op": 1e-6, "µs/op": 1e-6, "ms/op": 1e-3, "s/op": 1, "sec/op": 1}

// PerOpSeconds returns the seconds one unit of a time-per-operation unit stands for
// ("ns/op": 1e-9), and false for any other unit (a count, a rate, bytes).
func PerOpSeconds(unit string) (float64, bool) {
	s, ok := perOpSeconds[strings.TrimSpace(unit)]
	return s, ok
}

// BoundIn returns the record's censoring bound (AtLeast) in unit, converted between
// time-per-operation units; 0 when the record has none or its unit does not convert.
func (r Record) BoundIn(unit string) float64 {
	if !r.TimedOut || !(r.AtLeast > 0) {
		return 0
	}
	if r.Unit == unit {
		return r.AtLeast
	}
	from, ok1 := PerOpSeconds(r.Unit)
	to, ok2 := PerOpSeconds(unit)
	if !ok1 || !ok2 {
		return 0
	}
	return r.AtLeast * from / to
}
