package within

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPath(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(root, "results", "r1"), 0o755)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("key"), 0o600)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "results", "r1", "link"))
	os.Symlink(outside, filepath.Join(root, "results", "dirlink"))
	os.Symlink(filepath.Join(root, "results"), filepath.Join(root, "alias"))
	tests := []struct {
		p  string
		ok bool
	}{
		{"results/r1", true},
		{"results/r1/new-file", true},
		{"alias/r1", true}, // a link that stays inside
		{"experiments/../results", true},
		{".", true},
		{"../x", false},
		{"results/../../x", false},
		{"results/r1/link", false},
		{"results/dirlink/secret", false},
		{"results/dirlink/not-yet", false},
		{outside, false},
		{filepath.Join(root, "results"), true},
	}
	for _, tt := range tests {
		got, err := Path(root, tt.p)
		switch {
		case tt.ok && err != nil:
			t.Errorf("Path(%q): %v", tt.p, err)
		case !tt.ok && (err == nil || !strings.Contains(err.Error(), "leads outside")):
			t.Errorf("Path(%q) = %q, %v; want it refused", tt.p, got, err)
		}
	}
}
