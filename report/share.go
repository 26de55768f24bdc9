package report

import (
	"fmt"
	"io"
	"time"

	"golang.org/x/perf/benchunit"

	"github.com/flipbench/flipbench/analysis/loaded"
	"github.com/flipbench/flipbench/driftcheck"
	"github.com/flipbench/flipbench/internal/mdtable"
)

// LaneShare is how much of a lane's process time its recorded samples were: the sum of
// its sample times (value x iterations, time units only) over the sum of its processes'
// wall times, over every good run. The rest is process start-up, warmup, the b.N ramp-up
// of a duration benchtime and the benchmark's setup: time the run pays for and does not
// measure.
type LaneShare struct {
	Lane string
	// Iterations is the lane's fixed b.N (0: none) and Benchtime its declared benchtime.
	Iterations int
	Benchtime  string
	// Replanned says the iteration count was re-planned (receipt.Lane.Replanned),
	// Lengthened that it was raised for a setup outside the timer
	// (receipt.Lane.Lengthened).
	Replanned, Lengthened bool
	// SampleSec is the median time of one sample in each arm, seconds.
	SampleSec map[string]float64
	// Share is the measured share of process time, 0 to 1.
	Share float64
	// Runs is the number of runs it is measured over.
	Runs int
}

// SampleShares returns the share of process time of every lane whose samples are times.
func SampleShares(d *loaded.Receipt) []LaneShare {
	var out []LaneShare
	for _, l := range d.Plan.Lanes {
		s := LaneShare{Lane: l.Name, Iterations: l.Iterations, Benchtime: l.Benchtime, Replanned: l.Replanned != "", Lengthened: l.Lengthened != "", SampleSec: map[string]float64{}}
		var sampled, wall float64
		per := map[string][]float64{}
		for _, r := range d.Records {
			if r.Lane != l.Name || !r.OK() || !r.Ended.After(r.Started) || r.Counting != nil {
				continue
			}
			sum := 0.0
			timed := true
			for i, v := range r.Samples {
				sec, unit := benchunit.Tidy(v, r.Unit)
				if unit != "sec/op" {
					timed = false
					break
				}
				n := 1
				if i < len(r.Iters) && r.Iters[i] > 0 {
					n = r.Iters[i]
				}
				sum += sec * float64(n)
				per[r.Arm] = append(per[r.Arm], sec*float64(n))
			}
			if !timed {
				continue
			}
			sampled += sum
			wall += r.Ended.Sub(r.Started).Seconds()
			s.Runs++
		}
		if s.Runs == 0 || wall <= 0 {
			continue
		}
		s.Share = sampled / wall
		for a, xs := range per {
			s.SampleSec[a] = driftcheck.Median(xs)
		}
		out = append(out, s)
	}
	return out
}

// SharesTable writes the lanes' shares of process time as a markdown table: lane,
// iterations per sample, each arm's median sample time, the share.
func SharesTable(w io.Writer, d *loaded.Receipt, shares []LaneShare) error {
	arms := d.Plan.ArmNames()
	header := []string{"lane", "iterations per sample"}
	for _, a := range arms {
		header = append(header, a+" sample")
	}
	header = append(header, "share of process time")
	var rows [][]string
	for _, s := range shares {
		iters := "b.N of go test"
		switch {
		case s.Iterations > 0:
			how := ""
			if s.Replanned {
				how += ", re-planned"
			}
			if s.Lengthened {
				how += ", lengthened"
			}
			iters = fmt.Sprintf("%dx (fixed for %s%s)", s.Iterations, s.Benchtime, how)
		case s.Benchtime != "":
			iters = "benchtime " + s.Benchtime
		}
		row := []string{s.Lane, iters}
		for _, a := range arms {
			if v, ok := s.SampleSec[a]; ok {
				row = append(row, time.Duration(v*1e9).Round(time.Microsecond).String())
			} else {
				row = append(row, "-")
			}
		}
		rows = append(rows, append(row, fmt.Sprintf("%.0f%%", 100*s.Share)))
	}
	return mdtable.Write(w, header, rows)
}
