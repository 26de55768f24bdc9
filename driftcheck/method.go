package driftcheck

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Method is how an analysis turns a receipt's data into verdicts, beyond the thresholds a
// page pre-registers (Config): the analysis schema of the code, the error-spending
// function a sequential rule uses when the page names none, how a lane's noise borrows
// from others, which pairs are set aside, when collections are judged each with its own
// noise, and how the lanes of a run are controlled as a family. A plan records the method
// its run was planned with, and an analysis the method it was computed with, so a
// finished page keeps the verdict it was given until someone re-analyses it on purpose.
//
// Every part of a method is data: a change of flipbench's analysis that can be expressed
// as a new value of a part (a new family control, a new spending function) keeps the old
// values computable, and receipts planned with them are recomputed by them. A change that
// cannot raises SchemaVersion; a receipt of an older schema then keeps the analysis it
// stored, verified by its hash.
type Method struct {
	// Schema is the analysis schema the method belongs to (SchemaVersion of the code that
	// made it).
	Schema int `json:"analysis_schema"`
	// Spending is the error-spending function of a sequential rule whose page names none
	// (drift.spending), and with it the function of every look.
	Spending Spending `json:"spending"`
	// Moderation is how a lane's noise borrows from the run's other lanes and the host's
	// calibration (moderate.go).
	Moderation string `json:"moderation"`
	// SetAside is the rule that sets a disturbed pair aside (lane.go, rejectOutliers).
	SetAside string `json:"set_aside"`
	// CollectionNoiseP is the p-value of Bartlett's test below which a lane's collections
	// are judged each with its own noise (collnoise.go).
	CollectionNoiseP float64 `json:"collection_noise_p"`
	// Family is how the reproduced verdicts of a run's lanes are controlled together:
	// FamilyPerLane controls each lane alone.
	Family string `json:"family"`
	// Interference is what is done with samples a neighbour descheduled, from the
	// run-queue delay the kernel counted over each sample (receipt.Interval): "" leaves
	// them in (every method before the kernel's counts were read), InterferenceRunQueue20
	// sets them aside.
	Interference string `json:"interference,omitempty"`
	// Version is the flipbench that planned the run (in a plan) or computed the analysis
	// (in an analysis): `git describe` of its build, or "" when the build did not say.
	Version string `json:"flipbench_version,omitempty"`
}

// The parts of the methods this code computes.
const (
	// ModerationEB: a lane's variance is moderated by an empirical-Bayes prior fitted over
	// the run's lanes of its noise group, lanes whose noise is an outlier left out at the
	// upper 1% (outlierZ), the host's calibration lent as one more prior when the page
	// asks (drift.calibration-df).
	ModerationEB = "empirical-bayes"
	// SetAsideHampel5: a pair whose pair mean or order effect lies more than 5 robust
	// standard deviations from the lane's other pairs is set aside.
	SetAsideHampel5 = "hampel-5"
	// FamilyPerLane: each lane is judged at the page's error rate on its own.
	FamilyPerLane = "per-lane"
	// InterferenceRunQueue20: a sample of a timed lane whose process waited for a CPU
	// more than MaxWaitShare of its interval is set aside, and a run left with fewer than
	// half its samples is set aside whole (a sequential run measures its pass again); a
	// candidate whose samples wait far more often than the base's is reported as a
	// finding of the lane, its samples kept (loaded.DriftInput; docs/busy-host.md).
	InterferenceRunQueue20 = "run-queue-20"
)

// MaxWaitShare is the share of a sample's interval its process may spend waiting for a
// CPU before InterferenceRunQueue20 sets the sample aside.
const MaxWaitShare = 0.20

// CurrentMethod returns the method this flipbench analyses new runs with; version is
// the build's (Method.Version).
func CurrentMethod(version string) Method {
	return Method{Schema: SchemaVersion, Spending: DefaultSpending, Moderation: ModerationEB,
		SetAside: SetAsideHampel5, CollectionNoiseP: collectionNoiseP, Family: FamilyPerLane,
		Interference: InterferenceRunQueue20, Version: version}
}

// ImpliedMethod returns the method a receipt planned before methods were recorded is
// judged by: the method of analysis schema 13, the code every page was last finalized
// with before plans recorded their method.
func ImpliedMethod() Method {
	return Method{Schema: 13, Spending: SpendPocock, Moderation: ModerationEB,
		SetAside: SetAsideHampel5, CollectionNoiseP: 0.01, Family: FamilyPerLane}
}

// Computable returns nil when this code computes method m, and otherwise an error that
// says what it does not compute.
func (m Method) Computable() error {
	switch {
	case m.Schema != SchemaVersion:
		return fmt.Errorf("analysis schema %d: this flipbench computes schema %d", m.Schema, SchemaVersion)
	case !slices.Contains(Spendings(), m.Spending):
		return fmt.Errorf("spending %q: this flipbench spends by one of %v", m.Spending, Spendings())
	case m.Moderation != ModerationEB:
		return fmt.Errorf("moderation %q: this flipbench moderates by %s", m.Moderation, ModerationEB)
	case m.SetAside != SetAsideHampel5:
		return fmt.Errorf("set-aside %q: this flipbench sets aside by %s", m.SetAside, SetAsideHampel5)
	case m.CollectionNoiseP != collectionNoiseP:
		return fmt.Errorf("collection noise p %g: this flipbench tests at %g", m.CollectionNoiseP, collectionNoiseP)
	case m.Family != FamilyPerLane:
		return fmt.Errorf("family %q: this flipbench controls %s", m.Family, FamilyPerLane)
	case m.Interference != "" && m.Interference != InterferenceRunQueue20:
		return fmt.Errorf("interference %q: this flipbench sets aside by %s, or not at all", m.Interference, InterferenceRunQueue20)
	}
	return nil
}

// Same reports whether m and o are one method: every part but the version equal.
func (m Method) Same(o Method) bool {
	m.Version, o.Version = "", ""
	return m == o
}

// String writes the method as one line of key=value parts, which ParseMethod reads back:
// "schema=13 spending=pocock moderation=empirical-bayes set-aside=hampel-5
// collection-noise-p=0.01 family=per-lane interference=run-queue-20". The version is left
// out: it names who computed, not how. A part added to methods later is written only when
// it is not at the value it stands for in the methods before it (interference: "").
func (m Method) String() string {
	s := fmt.Sprintf("schema=%d spending=%s moderation=%s set-aside=%s collection-noise-p=%s family=%s",
		m.Schema, m.Spending, m.Moderation, m.SetAside, strconv.FormatFloat(m.CollectionNoiseP, 'g', -1, 64), m.Family)
	if m.Interference != "" {
		s += " interference=" + m.Interference
	}
	return s
}

// ParseMethod reads a method written by Method.String: every part once, in any order; a
// part added later (interference) may be missing, and reads as it was before it existed.
func ParseMethod(s string) (Method, error) {
	var m Method
	seen := map[string]bool{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || v == "" {
			return Method{}, fmt.Errorf("method %q: %q is not key=value", s, f)
		}
		if seen[k] {
			return Method{}, fmt.Errorf("method %q: %s given twice", s, k)
		}
		seen[k] = true
		var err error
		switch k {
		case "schema":
			m.Schema, err = strconv.Atoi(v)
		case "spending":
			m.Spending = Spending(v)
		case "moderation":
			m.Moderation = v
		case "set-aside":
			m.SetAside = v
		case "collection-noise-p":
			m.CollectionNoiseP, err = strconv.ParseFloat(v, 64)
		case "family":
			m.Family = v
		case "interference":
			m.Interference = v
		default:
			return Method{}, fmt.Errorf("method %q: unknown part %q (want schema, spending, moderation, set-aside, collection-noise-p, family, interference)", s, k)
		}
		if err != nil {
			return Method{}, fmt.Errorf("method %q: %s: %v", s, k, err)
		}
	}
	if delete(seen, "interference"); len(seen) != 6 {
		return Method{}, fmt.Errorf("method %q: want all six parts (schema, spending, moderation, set-aside, collection-noise-p, family)", s)
	}
	return m, nil
}

// Analyze runs the drift check by the current method (CurrentMethod).
func Analyze(in Input, cfg Config) (Report, error) { return AnalyzeBy(CurrentMethod(""), in, cfg) }

// AnalyzeBy runs the drift check by method m, which this code must compute
// (Method.Computable): the spending function of cfg, when the page names one, is the
// page's; otherwise m's. The report records m (Report.Method; its Config the spending
// used).
func AnalyzeBy(m Method, in Input, cfg Config) (Report, error) {
	if err := m.Computable(); err != nil {
		return Report{}, err
	}
	if cfg.Spending == "" {
		cfg.Spending = m.Spending
	}
	rep, err := analyze(in, cfg)
	if err != nil {
		return rep, err
	}
	rep.Method = &m
	return rep, nil
}
