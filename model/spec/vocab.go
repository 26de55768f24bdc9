package spec

// Status is an experiment's status: where its page is in its life cycle, and what the
// decision rule (or a person) concluded.
type Status string

// Experiment statuses. A page starts planned; finalize sets accepted, rejected or
// inconclusive from the decision rule; a person may set superseded.
const (
	StatusPlanned      Status = "planned"
	StatusRunning      Status = "running"
	StatusAccepted     Status = "accepted"
	StatusRejected     Status = "rejected"
	StatusInconclusive Status = "inconclusive"
	StatusSuperseded   Status = "superseded"
)

// StatusByRule is the value of status-by when finalize set the status from the decision
// rule; an empty status-by means a person set it.
const StatusByRule = "rule"

// Statuses returns the allowed values of status, in life-cycle order.
func Statuses() []Status {
	return []Status{StatusPlanned, StatusRunning, StatusAccepted, StatusRejected, StatusInconclusive, StatusSuperseded}
}

// Experiment categories: what kind of question an experiment asks.
const (
	// CategoryMoonshot is a large or uncertain change to how something works, expected to
	// fail more often than not.
	CategoryMoonshot = "moonshot"
	// CategoryIncremental is a small, targeted optimisation of existing code.
	CategoryIncremental = "incremental"
	// CategoryCleanup is a simplification or refactor that must not cost performance
	// (primary lanes usually expect neutral).
	CategoryCleanup = "cleanup"
	// CategoryMeasurement changes no code under test: it characterises the system, the
	// harness or the host (an A/A run, a new lane, a noise study).
	CategoryMeasurement = "measurement"
	// CategoryRegressionHunt confirms or locates a suspected regression.
	CategoryRegressionHunt = "regression-hunt"
	// CategoryReplication re-runs an earlier experiment's question on newer code or other
	// hardware, to see whether its result still holds.
	CategoryReplication = "replication"
)

// Categories returns the closed vocabulary of category.
func Categories() []string {
	return []string{CategoryMoonshot, CategoryIncremental, CategoryCleanup, CategoryMeasurement,
		CategoryRegressionHunt, CategoryReplication}
}

// Lane expectations and better-directions.
const (
	ExpectFaster  = "faster"
	ExpectSlower  = "slower"
	ExpectNeutral = "neutral"
	BetterLower   = "lower"
	BetterHigher  = "higher"
)

// roles returns the allowed lane roles.
func roles() []Role { return []Role{RolePrimary, RoleSecondary, RoleGuard, RoleControl} }

// expects returns the allowed lane expectations.
func expects() []string { return []string{ExpectFaster, ExpectSlower, ExpectNeutral} }

// betters returns the allowed lane better-directions.
func betters() []string { return []string{BetterLower, BetterHigher} }

// Name patterns.
const (
	// NamePattern is what arm and profile names must match.
	NamePattern = `^[A-Za-z][A-Za-z0-9_-]*$`
	// LanePattern is what lane names must match: a Go benchmark name without its
	// "Benchmark" prefix (sub-benchmarks included, as in "Get/size=10"), or an exec lane.
	LanePattern = `^[A-Za-z0-9][A-Za-z0-9_./=:+-]*$`
	// EnvPattern is what environment variable names must match.
	EnvPattern = `^[A-Za-z_][A-Za-z0-9_]*$`
	// TagPattern is what a build tag must match.
	TagPattern = `^[A-Za-z0-9_.]+$`
	// UnitPattern is what a metric unit in a lane's nonzero list must match: a unit as a
	// Go benchmark line prints it, without blanks.
	UnitPattern = `^[^\s]+$`
)
