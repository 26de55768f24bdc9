package cli

import (
	"runtime/debug"
	"testing"
)

func TestModuleVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tt := range []struct {
		name   string
		linked string
		bi     *debug.BuildInfo
		want   string
	}{
		{"make stamps git describe", "v0.4.0-3-g1a2b3c4", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "v0.4.0-3-g1a2b3c4"},
		{"go install of a tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{"go install of a commit", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261202141853-d7a71ed0a1b2"}}, "v0.0.0-20261202141853-d7a71ed0a1b2"},
		{"go build in a clone", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("d7a71ed0a1b2c3d4e5f60718293a4b5c6d7e8f90", "false")}, "(devel) commit d7a71ed0a1b2"},
		{"go build with changes", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("d7a71ed0a1b2c3d4", "true")}, "(devel) commit d7a71ed0a1b2+dirty"},
		{"a replaced module", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-00010101000000-000000000000"}}, "(devel)"},
		{"-buildvcs=false outside make", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)"},
		{"no build info", "", nil, "(devel)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := moduleVersion(tt.linked, tt.bi); got != tt.want {
				t.Errorf("moduleVersion = %q, want %q", got, tt.want)
			}
		})
	}
}
