package shquote

import (
	"os/exec"
	"strings"
	"testing"
)

func TestJoin(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"flipbench", "compare", "--save", "1", "--title", "ASCII fast path in Tokenize"}, "flipbench compare --save 1 --title 'ASCII fast path in Tokenize'"},
		{[]string{"--bench", "Insert|Delete"}, "--bench 'Insert|Delete'"},
		{[]string{"it's", ""}, `'it'\''s' ''`},
		{[]string{"./...", "--primary=^Tok", "a$b"}, "./... '--primary=^Tok' 'a$b'"},
	} {
		if got := Join(tt.args); got != tt.want {
			t.Errorf("Join(%q) = %s, want %s", tt.args, got, tt.want)
		}
	}
}

// TestJoinRoundTrip has sh read the joined line back and checks it gets the arguments.
func TestJoinRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh to read the command back")
	}
	args := []string{"a b", "it's", "$HOME", "`x`", `"q"`, "tab\there", "", "*", "new\nline"}
	cmd := exec.Command(sh, "-c", "set -- "+Join(args)+`; for a in "$@"; do printf '%s\0' "$a"; done`)
	got, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
	if strings.Join(parts, "|") != strings.Join(args, "|") || len(parts) != len(args) {
		t.Errorf("sh read back %q, want %q", parts, args)
	}
}
