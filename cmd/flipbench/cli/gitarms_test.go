package cli

import (
	"encoding/json"
	"os"
	"os/exec"

	"github.com/rogpeppe/go-internal/testscript"
)

// gitArmsEnv lets the gitarms_* scripts build Go code and make git commits in testscript's
// minimal environment: go finds its caches (the script's HOME is /no-home) and works
// offline, and git reads no system or global configuration and commits with a fixed author
// and date, so commit hashes are the same on every run.
func gitArmsEnv(e *testscript.Env) {
	goenv := map[string]string{}
	if _, err := exec.LookPath("go"); err == nil {
		if out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS").Output(); err == nil {
			_ = json.Unmarshal(out, &goenv)
		}
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS"} {
		if v := os.Getenv(k); v != "" {
			goenv[k] = v
		}
		if goenv[k] != "" {
			e.Setenv(k, goenv[k])
		}
	}
	e.Setenv("GOPROXY", "off")
	e.Setenv("GOTOOLCHAIN", "local")
	e.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	e.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	for _, who := range []string{"AUTHOR", "COMMITTER"} {
		e.Setenv("GIT_"+who+"_NAME", "Flip Bench")
		e.Setenv("GIT_"+who+"_EMAIL", "flipbench@example.com")
		e.Setenv("GIT_"+who+"_DATE", "2026-11-29T12:00:00Z")
	}
}
