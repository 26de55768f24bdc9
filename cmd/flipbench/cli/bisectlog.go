package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flipbench/flipbench/internal/clock"
	"github.com/flipbench/flipbench/model/receipt"
	"github.com/flipbench/flipbench/verbs/bisect"
)

// bisectLogDir returns the folder of the bisection's log: a new results/<stamp>-bisect,
// or the --resume folder with the steps it holds.
func bisectLogDir(c clock.Clock, results, resume string, want bisectLog) (string, []bisect.Step, error) {
	if resume != "" {
		l, err := bisect.ReadLog(resume)
		if err != nil {
			return "", nil, usageError("--resume %s: %v", resume, err)
		}
		if err := bisect.CheckResume(l, want.Log); err != nil {
			return "", nil, usageError("%v", err)
		}
		return resume, l.Outcome.Steps, nil
	}
	if err := os.MkdirAll(results, 0o755); err != nil {
		return "", nil, err
	}
	for {
		dir := filepath.Join(results, c.Now().UTC().Format(receipt.StampFormat)+"-bisect")
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil, nil
		}
		if !os.IsExist(err) {
			return "", nil, err
		}
		time.Sleep(time.Second)
	}
}

// writeBisect prints the outcome: the text and the log's path, or with --json the log.
func writeBisect(s Streams, opts *bisectOptions, log bisectLog, out *bisect.Outcome, dir string) error {
	if opts.json {
		log.Outcome = out
		return bisect.EncodeLog(s.Out, log.Log)
	}
	if err := bisect.Write(s.Out, out, relPath); err != nil {
		return err
	}
	_, err := fmt.Fprintf(s.Out, "log: %s\n", relPath(filepath.Join(dir, bisect.LogFile)))
	return err
}
