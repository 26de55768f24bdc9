package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/model/spec"
)

// ReceiptPattern is what the name of a receipt data folder matches: the UTC stamp of the
// run, the experiment number and the label, as in 2026-08-19T07-40-00Z-exp275-quick.
const ReceiptPattern = `^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z)-exp(\d+)-([A-Za-z0-9_.+-]+)$`

// ReceiptName is the parsed name of a receipt data folder.
type ReceiptName struct {
	Stamp      string
	Experiment int
	Label      string
}

// ParseReceiptName parses the base name of a receipt data folder (or of its .md page).
func ParseReceiptName(name string) (ReceiptName, bool) {
	name = strings.TrimSuffix(filepath.Base(name), ".md")
	m := regexp.MustCompile(ReceiptPattern).FindStringSubmatch(name)
	if m == nil {
		return ReceiptName{}, false
	}
	id, err := strconv.Atoi(m[2])
	if err != nil {
		return ReceiptName{}, false
	}
	return ReceiptName{Stamp: m[1], Experiment: id, Label: m[3]}, true
}

// Receipts lists the receipt data folders of experiment id under root/results, oldest
// first (by stamp, then name). Shard receipts (flipbench ab --shard) are not listed: a
// sharded run's receipt is the merge of its shards.
func Receipts(root string, id int) ([]string, error) {
	dir := filepath.Join(root, ResultsDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		n, ok := ParseReceiptName(e.Name())
		if !ok || !e.IsDir() || n.Experiment != id {
			continue
		}
		// A results folder without a plan is not an A/B receipt: flipbench incidence
		// writes results/<stamp>-expNNN-incidence/ with the same kind of name.
		if _, err := os.Stat(filepath.Join(dir, e.Name(), receipt.PlanFile)); err != nil {
			continue
		}
		// A shard of a run (flipbench ab --shard) holds some of its pass pairs: the run's
		// receipt is the merge of its shards.
		if sh, err := receipt.ShardOf(filepath.Join(dir, e.Name())); err == nil && sh != nil && sh.Index > 0 {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	slices.SortFunc(out, func(a, b string) int {
		na, _ := ParseReceiptName(a)
		nb, _ := ParseReceiptName(b)
		if c := strings.Compare(na.Stamp, nb.Stamp); c != 0 {
			return c
		}
		// Receipts of one second (a merge right after its shards' runs) are ordered by
		// when their manifests were written, so the last one finished is the newest.
		if c := finishedAt(a).Compare(finishedAt(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out, nil
}

// finishedAt is when a receipt's manifest was written. A receipt without one (still
// measuring, or interrupted) is newer than every finished one of its second.
func finishedAt(dir string) time.Time {
	st, err := os.Stat(filepath.Join(dir, receipt.ManifestFile))
	if err != nil {
		return time.Unix(1<<62, 0)
	}
	return st.ModTime()
}

// Finished reports whether a receipt data folder is finished: it has its manifest and its
// page. A run still measuring, or one that was interrupted, has neither.
func Finished(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, receipt.ManifestFile))
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	_, err = os.Stat(receipt.PagePath(dir))
	return err == nil
}

// NewestReceipt returns the newest finished receipt data folder of experiment id under
// root/results, and the unfinished ones newer than it (a run still measuring, or
// interrupted), which it passed over.
func NewestReceipt(root string, id int) (string, []string, error) {
	all, err := Receipts(root, id)
	if err != nil {
		return "", nil, err
	}
	var unfinished []string
	for i := len(all) - 1; i >= 0; i-- {
		if Finished(all[i]) {
			return all[i], unfinished, nil
		}
		unfinished = append(unfinished, all[i])
	}
	if len(unfinished) > 0 {
		return "", unfinished, fmt.Errorf("experiment %d has no finished receipt under %s: %s is still measuring or was interrupted (flipbench ab --resume %s finishes it)",
			id, filepath.Join(root, ResultsDir), unfinished[0], unfinished[0])
	}
	return "", nil, fmt.Errorf("experiment %d has no receipt under %s (names like <stamp>-exp%03d-<label>); run flipbench ab %d first",
		id, filepath.Join(root, ResultsDir), id, id)
}

// ListedChanges checks a receipt against what the page at pagePath (its spec e) recorded
// of it: every entry of the page's receipts list that names the receipt's page or its
// manifest must still have the listed SHA-256. A finished receipt is immutable, so a
// receipt whose page or manifest changed since it was listed is refused, with every
// difference named, even when its manifest matches its files again (a doctored raw.jsonl
// with a recomputed manifest). It returns nil when the page does not list the receipt.
func ListedChanges(pagePath string, e *spec.Experiment, dir string) error {
	pageDir := filepath.Dir(pagePath)
	mine := map[string]bool{}
	for _, p := range []string{receipt.PagePath(dir), filepath.Join(dir, receipt.ManifestFile)} {
		if abs, err := filepath.Abs(p); err == nil {
			mine[abs] = true
		}
	}
	var errs []error
	for i, r := range e.Receipts {
		abs, err := filepath.Abs(filepath.Join(pageDir, filepath.FromSlash(r.Path)))
		if err != nil || !mine[abs] {
			continue
		}
		sum, err := receipt.HashFile(abs)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s:%d: receipts[%d]: %s: %v", pagePath, e.Lines[fmt.Sprintf("receipts[%d]", i)], i, r.Path, err))
		case sum != r.SHA256:
			errs = append(errs, fmt.Errorf("%s:%d: receipts[%d]: %s changed since the page listed it (sha256 %s, the page lists %s)",
				pagePath, e.Lines[fmt.Sprintf("receipts[%d]", i)], i, r.Path, receipt.ShortHash(sum), receipt.ShortHash(r.SHA256)))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("receipt %s is listed by %s and changed since; a finished receipt is immutable, so it is refused (restore it, e.g. with git checkout, or measure anew):\n%w",
			dir, pagePath, errors.Join(errs...))
	}
	return nil
}

// ListingPage returns the experiment page of the ledger under root that a receipt's plan
// names (plan.Page) when that page lists the receipt, with its parsed spec; "" when no
// page lists it.
func ListingPage(root, dir string, plan *receipt.Plan) (string, *spec.Experiment, error) {
	if plan.Page == "" {
		return "", nil, nil
	}
	page := filepath.Join(root, filepath.FromSlash(plan.Page))
	p, err := ReadPage(page)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	if p.Spec == nil {
		return "", nil, nil
	}
	abs, _ := filepath.Abs(dir)
	for _, r := range p.Spec.Receipts {
		ref, err := filepath.Abs(filepath.Join(filepath.Dir(page), filepath.FromSlash(r.Path)))
		if err != nil {
			continue
		}
		if ref == filepath.Join(abs, receipt.ManifestFile) || ref == receipt.PagePath(abs) {
			return page, p.Spec, nil
		}
	}
	return "", nil, nil
}

// ReceiptDir returns the data folder of a receipt given as its folder or as its .md page.
func ReceiptDir(path string) string {
	path = strings.TrimRight(path, `/\`)
	if base, ok := strings.CutSuffix(path, ".md"); ok {
		if st, err := os.Stat(base); err == nil && st.IsDir() {
			return base
		}
	}
	return path
}

// LoadReceipt loads a receipt, given as its data folder or its page, as loaded.Open does:
// it verifies the data folder against its manifest and refuses a receipt whose files
// changed since the run, and it takes the analysis stored in analysis.json (what the
// receipt page shows) once it has checked it against the drift check computed afresh
// from plan.json and raw.jsonl, refusing one that differs; an analysis of an older schema
// is replaced by the one computed afresh.
func LoadReceipt(dir string) (*loaded.Receipt, error) {
	return loaded.Open(ReceiptDir(dir))
}
