package receipt

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/atomicfile"
	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/internal/owner"
)

// The layout of a receipt data folder: the files it holds, by what writes them.
const (
	// Written as the run goes.
	PlanFile       = "plan.json"        // the plan, before the first run (WritePlan)
	RawFile        = "raw.jsonl"        // one Record per finished run, appended and fsynced (OpenLog)
	EnvFile        = "env.json"         // host snapshots before and after every pass (WriteEnv)
	LooksFile      = "looks.jsonl"      // a sequential run's looks, one per round (AppendLook)
	WarningsFile   = "warnings.jsonl"   // what the other files cannot show again (AppendWarnings)
	SupersededFile = "superseded.jsonl" // runs taken out of raw.jsonl to be measured again (Supersede)

	// Measured after the run, when asked for.
	IncidenceFile       = "incidence.json"       // the incidence report (WriteIncidence)
	IncidenceReportFile = "incidence.md"         // the same, as markdown
	IncidenceRunsFile   = "incidence-runs.jsonl" // the incidence suite's runs, one Record per line
	ProfilesFile        = "profiles.json"        // the profiled lanes' differences (WriteProfiles)
	ProfilesDir         = "profiles"             // the profiles themselves, written by the lane processes (ProfileDir)

	// Derived from the rest when the receipt is finished.
	AnalysisFile = "analysis.json" // the drift check's result (WriteAnalysis)
	BenchExt     = ".bench"        // <arm>.bench: an arm's samples for benchstat (WriteBench)
	PlotExt      = ".svg"          // plots of the lanes and the profiles (WritePlot)
	ManifestFile = "manifest.json" // the SHA-256 of every other file and of the page (Seal)
)

// StampFormat is the UTC time stamp that starts every receipt's name.
const StampFormat = "2006-01-02T15-04-05Z"

// Folder is a receipt's data folder, and the one writer of its files: it knows the
// folder's layout (the constants above) and writes its manifest. Packages that measure or
// analyse hand it values; none writes into a receipt folder by path. Reading is done by
// the Read functions of this package, which take the folder's path.
type Folder string

// Create makes a new, empty receipt data folder <stamp>-exp<NNN>-<label> under
// resultsDir. The stamp has one-second resolution, so when a run of the same experiment
// and label already took this second, it waits for the next one: every run gets a folder
// of its own, and stamps keep sorting by time.
func Create(resultsDir string, id int, label string, now clock.Clock) (stamp string, f Folder, err error) {
	if err := os.MkdirAll(resultsDir, 0o755); err != nil {
		return "", "", err
	}
	for try := 0; ; try++ {
		t := now.Now().UTC()
		stamp = t.Format(StampFormat)
		dir := filepath.Join(resultsDir, fmt.Sprintf("%s-exp%03d-%s", stamp, id, label))
		err = os.Mkdir(dir, 0o755)
		if err == nil || !errors.Is(err, os.ErrExist) || try == 3 {
			return stamp, Folder(dir), err
		}
		// Until the machine's next second, when the real clock's stamp changes; a fake
		// clock's stamp may never change, and the fourth try then gives up.
		time.Sleep(time.Until(t.Truncate(time.Second).Add(time.Second)))
	}
}

// Path returns the path of a file of the folder, name relative to it.
func (f Folder) Path(name string) string { return filepath.Join(string(f), filepath.FromSlash(name)) }

// Page returns the receipt page beside the folder: the folder's name plus ".md".
func (f Folder) Page() string { return PagePath(string(f)) }

// WritePlan writes plan.json.
func (f Folder) WritePlan(p *Plan) error { return atomicfile.WriteJSON(f.Path(PlanFile), p) }

// WriteEnv writes env.json.
func (f Folder) WriteEnv(e Env) error { return atomicfile.WriteJSON(f.Path(EnvFile), e) }

// WriteRecords writes recs as raw.jsonl, one line each, atomically: the raw runs of a
// merged receipt.
func (f Folder) WriteRecords(recs []Record) error {
	b, err := jsonLines(recs, 0)
	if err != nil {
		return err
	}
	return atomicfile.Write(f.Path(RawFile), b)
}

// AppendLook appends a look to looks.jsonl and syncs it to disk.
func (f Folder) AppendLook(l Look) error {
	l.SchemaVersion = LookSchema
	return appendJSONL(f.Path(LooksFile), l)
}

// AppendWarnings appends ws to warnings.jsonl and syncs it.
func (f Folder) AppendWarnings(ws ...Warning) error {
	if len(ws) == 0 {
		return nil
	}
	return appendJSONL(f.Path(WarningsFile), ws...)
}

// WriteAnalysis writes analysis.json.
func (f Folder) WriteAnalysis(a *driftcheck.Report) error {
	return atomicfile.WriteJSON(f.Path(AnalysisFile), a)
}

// WritePlot writes one plot, name being a file name ending in PlotExt.
func (f Folder) WritePlot(name string, svg []byte) error {
	if filepath.Base(name) != name || !strings.HasSuffix(name, PlotExt) {
		return fmt.Errorf("plot %q: want a file name ending in %s", name, PlotExt)
	}
	return atomicfile.Write(f.Path(name), svg)
}

// WriteIncidence writes the incidence report (its JSON, its markdown) and the runs of
// the suite that measured it (each record at RecordSchema).
func (f Folder) WriteIncidence(report, markdown []byte, runs []Record) error {
	b, err := jsonLines(runs, RecordSchema)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(f.Path(IncidenceRunsFile), b); err != nil {
		return err
	}
	if err := atomicfile.Write(f.Path(IncidenceReportFile), markdown); err != nil {
		return err
	}
	if err := atomicfile.Write(f.Path(IncidenceFile), report); err != nil {
		return fmt.Errorf("writing %s: %w", IncidenceFile, err)
	}
	return nil
}

// CopyIncidence copies the incidence files that from holds into f (a merge keeps the
// report its first shard measured).
func (f Folder) CopyIncidence(from Folder) error {
	for _, name := range []string{IncidenceFile, IncidenceReportFile, IncidenceRunsFile} {
		b, err := os.ReadFile(from.Path(name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := atomicfile.Write(f.Path(name), b); err != nil {
			return err
		}
	}
	return nil
}

// ProfileDir empties the profiles folder (what an interrupted attempt left is measured
// again), creates it, and returns its path, where the lane processes write their profiles.
func (f Folder) ProfileDir() (string, error) {
	dir := f.Path(ProfilesDir)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return dir, os.MkdirAll(dir, 0o755)
}

// WriteProfiles writes profiles.json.
func (f Folder) WriteProfiles(v any) error { return atomicfile.WriteJSON(f.Path(ProfilesFile), v) }

// Seal finishes the folder: it removes what killed writers left (stale temporary files),
// writes the manifest, which hashes every other file and the page about to be written
// beside the folder (so that a page edited by hand is told from the one its data
// rendered: VerifyPage), then writes the page.
func (f Folder) Seal(page []byte) (Manifest, error) {
	m, err := f.manifest()
	if err != nil {
		return Manifest{}, err
	}
	m.Page = hashBytes(page)
	if err := atomicfile.WriteJSON(f.Path(ManifestFile), m); err != nil {
		return Manifest{}, err
	}
	return m, atomicfile.Write(f.Page(), page)
}

// SealData finishes a folder that has no page (an incidence report of its own): the
// manifest of its files.
func (f Folder) SealData() (Manifest, error) {
	m, err := f.manifest()
	if err != nil {
		return Manifest{}, err
	}
	return m, atomicfile.WriteJSON(f.Path(ManifestFile), m)
}

// Discard removes the folder and its page: a receipt that could not be made (a merge
// that failed half way) leaves nothing behind. It is best effort, since it runs after an
// error that the caller reports.
func (f Folder) Discard() {
	os.RemoveAll(string(f))
	os.Remove(f.Page())
}

// manifest removes stale temporary files and hashes the folder's files.
func (f Folder) manifest() (Manifest, error) {
	if _, err := owner.RemoveStaleTemps(string(f)); err != nil {
		return Manifest{}, err
	}
	return hashDir(string(f))
}

// jsonLines marshals values as JSON lines; a non-zero schema is set on each record first.
func jsonLines(recs []Record, schema int) ([]byte, error) {
	var b []byte
	for _, r := range recs {
		if schema != 0 {
			r.SchemaVersion = schema
		}
		line, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		b = append(append(b, line...), '\n')
	}
	return b, nil
}
