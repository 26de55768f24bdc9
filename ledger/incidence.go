package ledger

import (
	"errors"
	"fmt"
	"os"

	"github.com/flipbench/flipbench/incidence"
)

// receiptIncidence reads the incidence report an ab run wrote into its receipt data folder
// (incidence.json, see package incidence) as the decision rule's incidence input. It
// returns nil when the receipt has none.
func receiptIncidence(dir string) (*Incidence, error) {
	r, err := incidence.Read(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("receipt %s: %w", dir, err)
	}
	return &Incidence{Total: r.Total, Eligible: r.Eligible, ControlFired: r.Control.Fired, Source: incidence.File}, nil
}
