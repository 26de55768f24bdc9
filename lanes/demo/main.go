// Command demo is the lane program of flipbench's bundled demo experiment (experiment 1):
// does pre-sizing a Go map make building a 20,000-key index faster?
//
// It is an exec harness: flipbench runs it once per (lane, arm, pass) as
//
//	demo -lane NAME -samples N -warmup W
//
// and it prints exactly N results in Go benchmark format, one operation per sample, after
// W unrecorded operations. Every operation runs between a call of opStart and a call of
// opEnd, the markers a lane that counts instructions names in its harness. The candidate
// arm sets DEMO_PRESIZE=1, which makes index-build allocate the map at its final size; the
// other lanes do not read the switch, so they are the experiment's guard and control.
// It writes the profiles flipbench's profiled process asks for with FLIPBENCH_CPUPROFILE
// and FLIPBENCH_MEMPROFILE (docs/profiles.md). DEMO_LOOKUP_MORE=1 makes lookup look up the first 1% of its keys a second time, about
// 1% more work in that lane only (experiment 20's patch arm).
//
// The lanes:
//
//   - index-build builds a 20,000-key map per operation (it allocates);
//   - lookup looks up each of the 20,000 keys once per operation in a map of all of them,
//     built before the first operation; it allocates nothing;
//   - sum-control sums a slice of a million integers per operation.
//
// lookup cycles through lookupMaps maps of the same keys, one per operation, because Go
// gives every map a hash seed of its own at random: the seed decides how many slots a
// lookup probes and how many false matches of a slot's hash byte cost a key comparison,
// so one map's 20,000 lookups cost a few thousand instructions more or less than
// another's (0.05% of the count, sd, measured under callgrind over 30 maps). With one map
// per process every sample of a process repeats its map's count and two processes differ
// by up to 0.2%: the seed, not the code. Spreading the keys of one operation over several
// maps does not help, since every lookup still draws its cost from one seed (measured:
// the same 0.05% with the keys over 4 or 16 maps); a map per operation makes a sample one
// draw of the seed, so a run's median over its samples is steady between processes as
// the cost of lookups averaged over seeds, which is what a change to the code moves.
// Before each operation the lane looks every key up once in the map it is about to use,
// outside the timer and the counted span, so the measured lookups find it in cache as a
// lane with one map would.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

const keys = 20000

// lookupMaps is how many maps lookup cycles through, one per operation: more than the
// samples and warmup of experiment 20's runs (14 operations), so the samples of a run
// use maps of different seeds.
const lookupMaps = 16

func main() {
	lane := flag.String("lane", "", "lane to run: index-build, lookup or sum-control")
	samples := flag.Int("samples", 10, "recorded samples")
	warmup := flag.Int("warmup", 2, "unrecorded warmup operations")
	flag.Parse()
	stop, err := startProfiles()
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
	defer stop()

	names := make([]string, keys)
	for i := range names {
		names[i] = "key-" + strconv.Itoa(i*7919)
	}
	presize := os.Getenv("DEMO_PRESIZE") == "1"

	var op func() int
	before := func() {} // runs before each operation, outside the timer and the counted span
	switch *lane {
	case "index-build":
		op = func() int { return len(buildIndex(names, presize)) }
	case "lookup":
		maps := make([]map[string]int, lookupMaps)
		for i := range maps {
			maps[i] = buildIndex(names, false)
		}
		keys := names
		if os.Getenv("DEMO_LOOKUP_MORE") == "1" {
			keys = append(append([]string(nil), names...), names[:len(names)/100]...)
		}
		cur := -1
		before = func() {
			cur = (cur + 1) % len(maps)
			lookupAll(maps[cur], names)
		}
		op = func() int { return lookupAll(maps[cur], keys) }
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
		before()
		opStart()
		sink += op()
		opEnd()
	}
	var ms runtime.MemStats
	for range *samples {
		before()
		runtime.ReadMemStats(&ms)
		alloc := ms.TotalAlloc
		start := time.Now()
		opStart()
		sink += op()
		opEnd()
		ns := time.Since(start).Nanoseconds()
		runtime.ReadMemStats(&ms)
		fmt.Printf("Benchmark%s 1 %d ns/op %d B/op\n", *lane, ns, ms.TotalAlloc-alloc)
	}
	if sink == 42 {
		fmt.Fprintln(os.Stderr, "unlikely")
	}
}

// startProfiles starts what flipbench's profiled process asks for (docs/profiles.md): a
// CPU profile into the file $FLIPBENCH_CPUPROFILE names, and an allocation profile into
// the one $FLIPBENCH_MEMPROFILE names, written by the returned stop when the lane is
// done. A measured run sets neither, and the lane then profiles nothing.
func startProfiles() (stop func(), err error) {
	var stops []func() error
	if name := os.Getenv("FLIPBENCH_CPUPROFILE"); name != "" {
		f, err := os.Create(name)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		stops = append(stops, func() error { pprof.StopCPUProfile(); return f.Close() })
	}
	if name := os.Getenv("FLIPBENCH_MEMPROFILE"); name != "" {
		stops = append(stops, func() error {
			f, err := os.Create(name)
			if err != nil {
				return err
			}
			return errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
		})
	}
	return func() {
		for _, s := range stops {
			if err := s(); err != nil {
				fmt.Fprintf(os.Stderr, "demo: writing a profile: %v\n", err)
			}
		}
	}, nil
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

// lookupAll looks every key up in idx and returns the sum of the positions found.
func lookupAll(idx map[string]int, keys []string) int {
	n := 0
	for _, k := range keys {
		n += idx[k]
	}
	return n
}
