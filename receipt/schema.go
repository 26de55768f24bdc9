package receipt

// Schema versions of the receipt's machine-readable files, each written in the file's
// schema_version field (docs/json.md is the field-by-field reference). A version goes up
// when a field changes meaning or a reader must know a new one; a reader that finds a
// version it does not know should refuse the file rather than guess.
const (
	// RecordSchema is the version of a raw.jsonl (and incidence-runs.jsonl) line. Version
	// 2 added iters and config; a line without schema_version is version 1.
	RecordSchema = 2
	// PlanSchema is the version of plan.json; a plan without schema_version is version 1.
	// Version 3 added rule (the pre-registered decision rule beyond lanes and protocol).
	PlanSchema = 3
	// LookSchema is the version of a looks.jsonl line; a line without schema_version is
	// version 1, the same fields. Version 3 added undecidable and the stop reason
	// undecidable.
	LookSchema = 3
)
