package relpath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestShort(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, want string }{
		{filepath.Join(wd, "a", "b.md"), filepath.Join("a", "b.md")},
		{filepath.Dir(wd), filepath.Dir(wd)},
		{"results/x", "results/x"},
	} {
		if got := Short(tt.in); got != tt.want {
			t.Errorf("Short(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
