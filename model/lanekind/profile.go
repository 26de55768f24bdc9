package lanekind

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// profileBase is the file name callgrind writes its dumps under: profileBase.1, .2, ...
// in order, and profileBase itself for the last one, at the process's end.
const profileBase = "callgrind.out"

// profile is what a counted run's dumps hold.
type profile struct {
	creator string // "callgrind-3.19.0"
	parts   []part // in the order they were dumped
}

// part is one dump: what was counted since the previous one.
type part struct {
	// trigger is the function whose entry made the dump (as callgrind names it), or ""
	// for the dump at the end of the process.
	trigger string
	// ir is the instructions counted, less those of the Go runtime's work paced by the
	// clock (pacedFns): how much of it falls into an operation depends on how long the
	// operation takes, not on what it does.
	ir       float64
	idle     int // calls of runtime.pidleput from runtime.findRunnable
	maxprocs int // calls of runtime.stopTheWorldGC from runtime.GOMAXPROCS
	gcs      int // calls of runtime.gcStart: garbage collections started
}

// readProfile reads the dumps of one counted process from dir.
func readProfile(dir string) (profile, error) {
	matches, err := filepath.Glob(filepath.Join(dir, profileBase+".*"))
	if err != nil {
		return profile{}, err
	}
	type numbered struct {
		n    int
		path string
	}
	var files []numbered
	for _, m := range matches {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(m), profileBase+"."))
		if err == nil && n > 0 {
			files = append(files, numbered{n, m})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].n < files[j].n })
	paths := make([]string, 0, len(files)+1)
	for _, f := range files {
		paths = append(paths, f.path)
	}
	last := filepath.Join(dir, profileBase)
	if _, err := os.Stat(last); err != nil {
		return profile{}, fmt.Errorf("callgrind wrote no profile (%s): %v", profileBase, err)
	}
	paths = append(paths, last)
	var prof profile
	for _, p := range paths {
		pt, creator, err := readPart(p)
		if err != nil {
			return profile{}, fmt.Errorf("reading callgrind's dump %s: %v", filepath.Base(p), err)
		}
		if prof.creator == "" {
			prof.creator = creator
		}
		prof.parts = append(prof.parts, pt)
	}
	return prof, nil
}

// pacedFns are the Go runtime's background work that is paced by the clock, whose
// instructions (their own and their callees', as callgrind attributes the calls they
// make) a measured call leaves out:
//
//   - runtime.sysmon, the monitor, on a thread of its own, which wakes on a timer;
//   - runtime.bgscavenge, the scavenger's goroutine, which returns free heap memory to
//     the operating system and sleeps in proportion to the time it worked, to keep to a
//     share of the CPU time. After every collection (testing runs one before each
//     benchmark call) it has memory to return, and how much of that work runs inside a
//     call depends on how long the call takes: under callgrind on a busy host, FeedJSON's
//     calls with b.N = 4 counted 3,000 to 108,000 of its instructions (0.3% of a call).
//     The scavenger leaves the memory it returned to be faulted in again when reused,
//     which the kernel does, executing no instruction of the program.
func pacedFns() []string { return []string{"runtime.sysmon", "runtime.bgscavenge"} }

// readPart reads one dump in callgrind's format, written with --compress-strings=no: its
// trigger, its total of the first event (Ir) less that of the runtime's clock-paced work
// (pacedFns), and the calls that show waiting.
func readPart(path string) (part, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return part{}, "", err
	}
	defer f.Close()
	var (
		pt               part
		creator, fn, cfn string
		events, summary  bool
		paced            float64
		pacedFn          = pacedFns()
		sc               = bufio.NewScanner(f)
	)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "creator: "):
			creator = strings.TrimPrefix(line, "creator: ")
		case strings.HasPrefix(line, "desc: Trigger: "):
			t := strings.TrimPrefix(line, "desc: Trigger: ")
			if name, ok := strings.CutPrefix(t, "--dump-before="); ok {
				pt.trigger = name
			}
		case strings.HasPrefix(line, "events: "):
			if f := strings.Fields(strings.TrimPrefix(line, "events: ")); len(f) == 0 || f[0] != "Ir" {
				return part{}, "", fmt.Errorf("events %q, want Ir first", line)
			}
			events = true
		case strings.HasPrefix(line, "summary: "):
			f := strings.Fields(strings.TrimPrefix(line, "summary: "))
			if len(f) == 0 {
				return part{}, "", fmt.Errorf("empty summary")
			}
			v, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				return part{}, "", fmt.Errorf("summary %q: %v", line, err)
			}
			pt.ir, summary = v, true
		case line != "" && (line[0] >= '0' && line[0] <= '9' || line[0] == '+' || line[0] == '-' || line[0] == '*'):
			// A cost line: position, then Ir. Under the fn= of a clock-paced
			// function it is that function's own cost or that of a call it made.
			if slices.Contains(pacedFn, fn) {
				f := strings.Fields(line)
				v, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err != nil {
					return part{}, "", fmt.Errorf("cost line %q: %v", line, err)
				}
				paced += v
			}
		case strings.HasPrefix(line, "fn="):
			fn = baseName(strings.TrimPrefix(line, "fn="))
		case strings.HasPrefix(line, "cfn="):
			cfn = baseName(strings.TrimPrefix(line, "cfn="))
		case strings.HasPrefix(line, "calls="):
			f := strings.Fields(strings.TrimPrefix(line, "calls="))
			if len(f) == 0 {
				continue
			}
			n, err := strconv.Atoi(f[0])
			if err != nil {
				return part{}, "", fmt.Errorf("calls %q: %v", line, err)
			}
			switch {
			case fn == "runtime.findRunnable" && cfn == "runtime.pidleput":
				pt.idle += n
			case fn == "runtime.GOMAXPROCS" && cfn == "runtime.stopTheWorldGC":
				pt.maxprocs += n
			case cfn == "runtime.gcStart":
				pt.gcs += n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return part{}, "", err
	}
	if !events || !summary {
		return part{}, "", fmt.Errorf("not a callgrind profile (no events or summary line)")
	}
	// A call of the paced work is costed, callees included, in the part where it returns,
	// as everything its thread ran since the call: when its goroutine parked inside it
	// (the scavenger waits inside its run), that is other goroutines' work too, from
	// earlier parts. Such a cost can exceed the part's own instructions; the part then
	// keeps its total, since what of the paced work fell into it is unknown (one such part
	// moves one sample, which the run's median of samples resists).
	if paced < pt.ir {
		pt.ir -= paced
	}
	return pt, creator, nil
}

// baseName strips what callgrind appends to a function's name: a recursion depth ('2) or
// a caller context ('caller).
func baseName(name string) string {
	name, _, _ = strings.Cut(name, "'")
	return name
}

// matchFunction reports whether callgrind's function pattern (with * for any run of
// characters and ? for one) matches name, as callgrind matches --toggle-collect and
// --dump-before.
func matchFunction(pattern, name string) bool {
	var re strings.Builder
	re.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '*':
			re.WriteString(".*")
		case '?':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	ok, err := regexp.MatchString(re.String(), baseName(name))
	return err == nil && ok
}
