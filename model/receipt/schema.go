package receipt

// Schema versions of the receipt's machine-readable files, each written in the file's
// schema_version field (docs/json.md is the field-by-field reference). A version goes up
// when a field changes meaning or a reader must know a new one; a reader that finds a
// version it does not know should refuse the file rather than guess.
const (
	// RecordSchema is the version of a raw.jsonl (and incidence-runs.jsonl) line. Version
	// 2 added iters and config; version 3 attempt and round (a pass measured again: a
	// reader must take the latest attempt of each lane's pass); version 4 timed_out and
	// at_least (a timed-out run is a censored observation, not a failure); a line without
	// schema_version is version 1.
	RecordSchema = 4
	// PlanSchema is the version of plan.json; a plan without schema_version is version 1.
	// Version 3 added rule (the pre-registered decision rule beyond lanes and protocol).
	PlanSchema = 3
	// LookSchema is the version of a looks.jsonl line; a line without schema_version is
	// version 1, the same fields. Version 3 added undecidable and the stop reason
	// undecidable; version 4 remeasure; version 5 remeasure[].failed (a failed run's pass is
	// measured again too); version 6 moved remeasure to the look whose round measured the
	// passes again, before the look (up to version 5 a look listed what the next round
	// would measure again).
	LookSchema = 6
)
