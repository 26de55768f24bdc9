// Command demo is the lane program of flipbench's bundled demo experiment (experiment 1):
// does pre-sizing a Go map make building a 20,000-key index faster?
//
// It is an exec harness: flipbench runs it once per (lane, arm, pass) as
//
//	demo -lane NAME -samples N -warmup W
//
// and it prints exactly N results in Go benchmark format, one operation per sample, after
// W unrecorded operations. Every operation runs between a call of opStart and a call of
// opEnd, the markers a lane that counts instructions names in its harness. The candidate arm sets DEMO_PRESIZE=1, which makes index-build
// allocate the map at its final size; the other lanes do not read the switch, so they are
// the experiment's guard and control.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

const keys = 20000

func main() {
	lane := flag.String("lane", "", "lane to run: index-build, lookup or sum-control")
	samples := flag.Int("samples", 10, "recorded samples")
	warmup := flag.Int("warmup", 2, "unrecorded warmup operations")
	flag.Parse()

	names := make([]string, keys)
	for i := range names {
		names[i] = "key-" + strconv.Itoa(i*7919)
	}
	presize := os.Getenv("DEMO_PRESIZE") == "1"

	var op func() int
	switch *lane {
	case "index-build":
		op = func() int { return len(buildIndex(names, presize)) }
	case "lookup":
		idx := buildIndex(names, false)
		op = func() int {
			n := 0
			for _, k := range names {
				n += idx[k]
			}
			return n
		}
	case "sum-control":
		// Long enough (about 0.3 ms) that one process's timer and frequency
		// quirks do not dominate a sample.
		xs := make([]int, 1<<20)
		for i := range xs {
			xs[i] = i
		}
		op = func() int {
			n := 0
			for _, x := range xs {
				n += x
			}
			return n
		}
	default:
		fmt.Fprintf(os.Stderr, "demo: unknown lane %q (want index-build, lookup or sum-control)\n", *lane)
		os.Exit(2)
	}

	sink := 0
	for range *warmup {
		opStart()
		sink += op()
		opEnd()
	}
	var ms runtime.MemStats
	for range *samples {
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		start := time.Now()
		opStart()
		sink += op()
		opEnd()
		ns := time.Since(start).Nanoseconds()
		runtime.ReadMemStats(&ms)
		fmt.Printf("Benchmark%s 1 %d ns/op %d B/op\n", *lane, ns, ms.TotalAlloc-before)
	}
	if sink == 42 {
		fmt.Fprintln(os.Stderr, "unlikely")
	}
}

// opStart and opEnd mark one operation for a lane that counts instructions: the
// instructions executed from a call of opStart to the next call of opEnd are the
// operation's (harness.op-start: main.opStart, op-end: main.opEnd). They do nothing; they
// must stay calls, so they are never inlined.
//
//go:noinline
func opStart() {}

//go:noinline
func opEnd() {}

// buildIndex maps every name to its position, optionally allocating the map at its final
// size first.
func buildIndex(names []string, presize bool) map[string]int {
	var idx map[string]int
	if presize {
		idx = make(map[string]int, len(names))
	} else {
		idx = map[string]int{}
	}
	for i, n := range names {
		idx[n] = i
	}
	return idx
}
