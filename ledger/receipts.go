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

	"github.com/flipbench/flipbench/receipt"
	"github.com/flipbench/flipbench/report"
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
// first (by stamp, then name).
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
		out = append(out, filepath.Join(dir, e.Name()))
	}
	slices.SortFunc(out, func(a, b string) int {
		na, _ := ParseReceiptName(a)
		nb, _ := ParseReceiptName(b)
		if c := strings.Compare(na.Stamp, nb.Stamp); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out, nil
}

// NewestReceipt returns the newest receipt data folder of experiment id under
// root/results.
func NewestReceipt(root string, id int) (string, error) {
	all, err := Receipts(root, id)
	if err != nil {
		return "", err
	}
	if len(all) == 0 {
		return "", fmt.Errorf("experiment %d has no receipt under %s (names like <stamp>-exp%03d-<label>); run flipbench ab %d first",
			id, filepath.Join(root, ResultsDir), id, id)
	}
	return all[len(all)-1], nil
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

// LoadReceipt loads a receipt, given as its data folder or its page, as report.Open does:
// it verifies the data folder against its manifest and refuses a receipt whose files
// changed since the run, and it takes the analysis stored in analysis.json (what the
// receipt page shows), not a fresh computation.
func LoadReceipt(dir string) (*report.Data, error) {
	return report.Open(ReceiptDir(dir))
}
