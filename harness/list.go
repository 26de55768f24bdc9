package harness

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/flipbench/flipbench/model/lanekind"
	"github.com/flipbench/flipbench/model/receipt"
)

// ListTimeout bounds one binary's lane listing.
const ListTimeout = time.Minute

// ListLanes lists, through st, the lanes of built arm a whose kind can list them (a gotest
// binary's -test.list: its top-level benchmarks, without the Benchmark prefix); listed is
// false for a kind that cannot (exec). It is flipbench's one listing of a binary's lanes:
// armbuild checks a spec's lanes against it, compare chooses its lanes from it, and the
// pipeline finds an incidence suite's lanes with it.
func ListLanes(ctx context.Context, st Starter, a receipt.Arm) (lanes []string, listed bool, err error) {
	kind, err := lanekind.Lookup(a.Kind)
	if err != nil {
		return nil, false, fmt.Errorf("arm %s: %w", a.Name, err)
	}
	args := kind.ListArgs(a.Bin)
	if args == nil {
		return nil, false, nil
	}
	p := st.Start(ctx, Command{Argv: args, Env: a.Env, Dir: a.Dir, Timeout: ListTimeout})
	if p.Err != nil {
		return nil, true, fmt.Errorf("arm %s: listing the lanes of %s: %v%s", a.Name, a.Bin, p.Err, outputTail(p.StderrTail))
	}
	return kind.Lanes(p.Stdout), true, nil
}

// outputTail formats what a failed program printed after its error: on the same line
// when it is one line, on the next lines otherwise, nothing when it printed nothing.
func outputTail(out string) string {
	out = strings.TrimSpace(out)
	switch {
	case out == "":
		return ""
	case !strings.Contains(out, "\n"):
		return ": " + out
	}
	return ":\n" + out
}

// valgrindTimeout bounds valgrind --version.
const valgrindTimeout = 30 * time.Second

// Valgrind checks, through st, that Valgrind can run here, and returns its version
// ("valgrind-3.19.0"): lanes with metric instructions are counted under it
// (lanekind.Counted). Its error is one line that says what to do. It lives here, not in
// lanekind beside the counter, because harness starts the processes and lanekind, which
// harness imports, starts none.
func Valgrind(ctx context.Context, st Starter) (string, error) {
	p := st.Start(ctx, Command{Argv: []string{"valgrind", "--version"}, Timeout: valgrindTimeout})
	if errors.Is(p.Err, exec.ErrNotFound) {
		return "", errors.New("valgrind: not found on PATH; lanes with metric: instructions are counted under Valgrind: install it (apt-get install -y valgrind, or make valgrind)")
	}
	v := strings.TrimSpace(string(p.Stdout))
	if p.Err != nil || !strings.HasPrefix(v, "valgrind-") {
		return "", fmt.Errorf("valgrind --version: %v %q; lanes with metric: instructions need a working Valgrind (reinstall it: apt-get install -y valgrind)", p.Err, v)
	}
	return v, nil
}
