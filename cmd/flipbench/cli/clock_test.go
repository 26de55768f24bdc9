package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flipbench/flipbench/internal/clock"
)

// TestClockAtTheTop fakes the clock where the command line makes it (Streams.Clock) and
// checks that what a verb dates reads it: the page flipbench new writes.
func TestClockAtTheTop(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errs bytes.Buffer
	s := Streams{In: strings.NewReader(""), Out: &out, Err: &errs, Clock: clock.Fixed(time.Date(2031, 7, 4, 23, 30, 0, 0, time.UTC))}
	if code := Main([]string{"new", "7", "a question"}, s); code != ExitOK {
		t.Fatalf("flipbench new: exit %d: %s", code, errs.String())
	}
	page, err := os.ReadFile(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("\ndate: 2031-07-04\n")) {
		t.Fatalf("the page is not dated by the fake clock (2031-07-04):\n%s", page)
	}
}

// TestClockReachesThePipeline checks that the options every measuring verb hands the
// pipeline carry the command's clock, which dates receipt folders, host snapshots and
// builds.
func TestClockReachesThePipeline(t *testing.T) {
	at := time.Date(2031, 7, 4, 23, 30, 0, 0, time.UTC)
	s := Streams{Err: &bytes.Buffer{}, Clock: clock.Fixed(at)}
	if got := pipelineOptions(s, nil, waitFlag{}, nil).Clock.Now(); !got.Equal(at) {
		t.Fatalf("the pipeline's clock reads %s, want the command's %s", got, at)
	}
}
