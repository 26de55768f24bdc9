package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildVersion is set at link time by make build and make install (-ldflags "-X
// github.com/flipbench/flipbench/cmd/flipbench/cli.buildVersion=..."), from git describe: a tag,
// or a tag, the commits since and the commit ("v0.4.0-3-g1a2b3c4"), or the commit alone
// when there is no tag, "-dirty" when the clone had changes. It is never written at run
// time: a build built otherwise leaves it empty and versionText asks the build info.
var buildVersion string

func newVersionCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print flipbench's version and the Go toolchain it was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(s.Out, "flipbench %s\n", versionText())
			return nil
		},
	}
}

// versionText is what flipbench version and flipbench --version print after the name:
// the version, the Go toolchain and the platform.
func versionText() string {
	bi, _ := debug.ReadBuildInfo()
	return fmt.Sprintf("%s %s %s/%s", moduleVersion(buildVersion, bi), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// moduleVersion says which flipbench a binary is, from the first of: the version make
// stamped at link time (linked); the module version go install or go run of
// module@version records (v0.4.0, or a pseudo-version naming the commit), which Go 1.24+
// also stamps from the clone's tag or commit in go build; the commit go build records from
// git (vcs.revision, "+dirty" with uncommitted changes), as "(devel) commit 1a2b3c4d5e6f";
// else "(devel)", a build with -buildvcs=false outside make.
func moduleVersion(linked string, bi *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if bi == nil {
		return "(devel)"
	}
	// A module replaced by a local folder records the zero pseudo-version: no version.
	if v := bi.Main.Version; v != "" && v != "(devel)" && !strings.HasPrefix(v, "v0.0.0-00010101000000-") {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "(devel)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return "(devel) commit " + rev
}
