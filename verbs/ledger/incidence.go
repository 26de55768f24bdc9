package ledger

import (
	"errors"
	"fmt"
	"os"

	"github.com/flipbench/flipbench/analysis/decide"
	"github.com/flipbench/flipbench/analysis/incidence"
	"github.com/flipbench/flipbench/model/receipt"
)

// receiptIncidence reads the incidence report an ab run wrote into its receipt data folder
// (incidence.json, see package incidence): the report, for the page, and the decision
// rule's incidence input made from it. It returns nils when the receipt has none.
func receiptIncidence(dir string) (*decide.Incidence, *incidence.Report, error) {
	r, err := incidence.Read(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("receipt %s: %w", dir, err)
	}
	in := &decide.Incidence{Total: r.Total, Eligible: r.Eligible, TotalCounter: r.Gate.Total, EligibleCounter: r.Gate.Eligible,
		ControlFired: r.Control.Fired, Broken: r.Broken(), Source: receipt.IncidenceFile,
		Gate: &receipt.IncidenceGate{Total: r.Gate.Total, Eligible: r.Gate.Eligible, Control: r.Gate.Control, MinShare: r.Gate.MinShare}}
	for _, f := range r.Findings {
		if f.Level == incidence.LevelError {
			in.Errors = append(in.Errors, f.Message)
		}
	}
	return in, r, nil
}
