package receipt

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flipbench/flipbench/internal/atomicfile"
	"github.com/flipbench/flipbench/internal/owner"
)

// Snapshot is the state of the host at one moment of a run.
type Snapshot struct {
	When       string    `json:"when"` // "before" or "after"
	Collection int       `json:"collection"`
	Pass       int       `json:"pass"`
	Time       time.Time `json:"time"`
	Hostname   string    `json:"hostname"`
	Kernel     string    `json:"kernel,omitempty"`
	CPUModel   string    `json:"cpu_model,omitempty"`
	CPUs       int       `json:"cpus"`
	Governor   string    `json:"governor,omitempty"`
	Load1      float64   `json:"load1"`
	Load5      float64   `json:"load5"`
	Load15     float64   `json:"load15"`
	// BusyPct is how much of the machine's CPU time other processes used, in percent of
	// all CPUs: on an "after" snapshot over the whole pass, less flipbench's own and its
	// lanes' CPU time; on the run's first "before" snapshot over a short idle window.
	// Unlike the load average, it does not count the lanes being measured.
	BusyPct       float64 `json:"busy_pct"`
	MemTotalBytes int64   `json:"mem_total_bytes,omitempty"`
	MemAvailBytes int64   `json:"mem_available_bytes,omitempty"`
	SwapUsedBytes int64   `json:"swap_used_bytes,omitempty"`
	DiskFreeBytes int64   `json:"disk_free_bytes,omitempty"`
	GoVersion     string  `json:"go_version"`
	// Warnings says what about the host may have disturbed the measurement.
	Warnings []string `json:"warnings,omitempty"`
}

// Env is the content of env.json: every snapshot of a run, in order.
type Env struct {
	Snapshots []Snapshot `json:"snapshots"`
}

// Log is the append-only raw.jsonl of a receipt folder.
type Log struct {
	f *os.File
}

// OpenLog opens raw.jsonl for appending, creating it if needed, and returns the records
// already in it. A last line cut short by a killed process is dropped (it was never
// acknowledged as written); any other bad line is an error naming the file and line.
func (f Folder) OpenLog() (*Log, []Record, error) {
	path := f.Path(RawFile)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	recs, good, err := parseRecords(path, data)
	if err != nil {
		return nil, nil, err
	}
	out, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, nil, err
	}
	if err := out.Truncate(int64(good)); err != nil {
		out.Close()
		return nil, nil, fmt.Errorf("%s: dropping a torn last line: %w", path, err)
	}
	if _, err := out.Seek(int64(good), io.SeekStart); err != nil {
		out.Close()
		return nil, nil, err
	}
	return &Log{f: out}, recs, nil
}

// Append writes one record as a line and syncs it to disk before returning.
func (l *Log) Append(r Record) error {
	r.SchemaVersion = RecordSchema
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("appending to %s: %w", l.f.Name(), err)
	}
	return l.f.Sync()
}

// Close closes the log.
func (l *Log) Close() error { return l.f.Close() }

// ReadRecords reads dir/raw.jsonl. A torn last line is ignored, as in OpenLog.
func ReadRecords(dir string) ([]Record, error) {
	path := filepath.Join(dir, RawFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	recs, _, err := parseRecords(path, data)
	return recs, err
}

// parseRecords parses JSON lines and returns the records and the byte length of the
// complete, valid prefix. Only an unterminated last line may be invalid.
func parseRecords(path string, data []byte) ([]Record, int, error) {
	var recs []Record
	good := 0
	line := 0
	for len(data[good:]) > 0 {
		line++
		rest := data[good:]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			// Unterminated: written by a process that died mid-write.
			break
		}
		var r Record
		if err := json.Unmarshal(rest[:nl], &r); err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		recs = append(recs, r)
		good += nl + 1
	}
	return recs, good, nil
}

// RemoveAbandoned removes the folders under resultsDir that a run killed before it wrote
// its plan left behind: folders holding nothing but temporary files of writers no longer
// alive. It returns their names.
func RemoveAbandoned(resultsDir string) ([]string, error) {
	entries, err := os.ReadDir(resultsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(resultsDir, e.Name())
		inner, err := os.ReadDir(dir)
		if err != nil || len(inner) == 0 {
			continue
		}
		abandoned := true
		for _, f := range inner {
			abandoned = abandoned && owner.StaleTemp(f.Name())
		}
		if !abandoned {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	return removed, errors.Join(errs...)
}

// ReadJSON reads the JSON document at path into v; errors name the file.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// ReadPlan reads and validates dir/plan.json.
func ReadPlan(dir string) (*Plan, error) {
	var p Plan
	path := filepath.Join(dir, PlanFile)
	if err := ReadJSON(path, &p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// Supersede moves the records of raw.jsonl for which drop is true into superseded.jsonl
// (appended and synced first, so no record is ever only in memory) and rewrites raw.jsonl
// atomically without them. It returns how many records moved. A Supersede cut short
// between the two steps is finished by the next one without a duplicate: a record already
// in superseded.jsonl is not appended again (and a torn last line there is dropped).
func (f Folder) Supersede(drop func(Record) bool) (int, error) {
	recs, err := ReadRecords(string(f))
	if err != nil {
		return 0, err
	}
	path := f.Path(SupersededFile)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	oldRecs, good, err := parseRecords(path, old)
	if err != nil {
		return 0, err
	}
	already := map[string]bool{}
	for _, r := range oldRecs {
		b, err := json.Marshal(r)
		if err != nil {
			return 0, err
		}
		already[string(b)] = true
	}
	var keep, moved []byte
	n := 0
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return 0, err
		}
		line := append(b, '\n')
		switch {
		case !drop(r):
			keep = append(keep, line...)
		case already[string(b)]:
			n++ // appended by a Supersede that was cut short before raw.jsonl was rewritten
		default:
			moved = append(moved, line...)
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return 0, err
	}
	if err := out.Truncate(int64(good)); err != nil {
		out.Close()
		return 0, fmt.Errorf("%s: dropping a torn last line: %w", path, err)
	}
	if _, err := out.Seek(int64(good), io.SeekStart); err != nil {
		out.Close()
		return 0, err
	}
	if _, err := out.Write(moved); err != nil {
		out.Close()
		return 0, err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return 0, err
	}
	if err := out.Close(); err != nil {
		return 0, err
	}
	return n, atomicfile.Write(f.Path(RawFile), keep)
}

// Manifest maps every file of a receipt data folder (relative, slash-separated) to its
// SHA-256.
type Manifest struct {
	Files map[string]string `json:"files"`
	// Page is the SHA-256 of the receipt page beside the folder (PagePath), as it was
	// rendered from the folder's data; empty in a folder without a page (an incidence
	// report) and in receipts finished before pages were hashed.
	Page string `json:"page_sha256,omitempty"`
}

// PagePath returns the receipt page of a data folder: the folder's name plus ".md".
func PagePath(dir string) string { return strings.TrimRight(dir, "/") + ".md" }

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	err := ReadJSON(filepath.Join(dir, ManifestFile), &m)
	return m, err
}

// VerifyPage checks the receipt page beside dir against the hash its manifest recorded
// when the page was rendered. A page edited since is an error: a receipt page is generated
// from its data, never written by hand. A manifest without a page hash (a receipt
// finished before pages were hashed) vouches for nothing here; the experiment page's
// receipts list, which hashes the page, still does.
func VerifyPage(dir string) error {
	m, err := ReadManifest(dir)
	if err != nil {
		return err
	}
	if m.Page == "" {
		return nil
	}
	page := PagePath(dir)
	sum, err := HashFile(page)
	if err != nil {
		return err
	}
	if sum != m.Page {
		return fmt.Errorf("%s: changed since it was rendered from its data (sha256 %s, %s says %s); a receipt page is generated, never edited: restore it, or render it again with flipbench ab --resume %s",
			page, ShortHash(sum), filepath.Join(dir, ManifestFile), ShortHash(m.Page), dir)
	}
	return nil
}

// VerifyManifest checks that every file in dir is listed in its manifest with the same
// hash and that no listed file is missing. Every problem is reported, one per line.
func VerifyManifest(dir string) error {
	var want Manifest
	if err := ReadJSON(filepath.Join(dir, ManifestFile), &want); err != nil {
		return err
	}
	got, err := hashDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range sortedKeys(want.Files) {
		sum, ok := got.Files[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: listed in %s but missing", filepath.Join(dir, name), ManifestFile))
		case sum != want.Files[name]:
			errs = append(errs, fmt.Errorf("%s: changed since the run (sha256 %s, manifest says %s)", filepath.Join(dir, name), ShortHash(sum), ShortHash(want.Files[name])))
		}
	}
	for _, name := range sortedKeys(got.Files) {
		if _, ok := want.Files[name]; !ok {
			errs = append(errs, fmt.Errorf("%s: not in %s", filepath.Join(dir, name), ManifestFile))
		}
	}
	return errors.Join(errs...)
}

// hashDir hashes every file in dir but the manifest: dot-files too, so nothing can be
// hidden in a receipt folder by its name. Only flipbench's own temporary files
// (owner.TempPrefix: a write in flight, or what a killed writer left) are passed over;
// nothing ever reads them, and WriteManifest and the run loop remove stale ones. A
// symbolic link or any other file that is not a regular file or a folder is an error: a
// receipt holds its data, it does not point at data elsewhere.
func hashDir(dir string) (Manifest, error) {
	m := Manifest{Files: map[string]string{}}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), owner.TempPrefix) {
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file (%s); a receipt folder holds its files, not links to files elsewhere", path, typeName(d.Type()))
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == ManifestFile {
			return nil
		}
		sum, err := HashFile(path)
		if err != nil {
			return err
		}
		m.Files[rel] = sum
		return nil
	})
	return m, err
}

// typeName names a file type for messages.
func typeName(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "type " + m.Type().String()
}

// hashBytes returns the hex SHA-256 of data.
func hashBytes(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// HashFile returns the hex SHA-256 of a file's content.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, bufio.NewReader(f)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// HostWarnings summarises the snapshots' warnings: each kind of problem (host busy, low
// disk) once, as first seen, with how many snapshots showed it.
func (e Env) HostWarnings() []string {
	var kinds []string
	first := map[string]string{}
	count := map[string]int{}
	for _, s := range e.Snapshots {
		for _, w := range s.Warnings {
			k := strings.Join(strings.Fields(w)[:min(2, len(strings.Fields(w)))], " ")
			if _, ok := first[k]; !ok {
				kinds = append(kinds, k)
				first[k] = w
			}
			count[k]++
		}
	}
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		w := first[k]
		if n := count[k]; n > 1 {
			w = fmt.Sprintf("%s (first of %d of the run's %d host snapshots that show it)", w, n, len(e.Snapshots))
		}
		out = append(out, w)
	}
	return out
}
