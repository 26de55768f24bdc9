package texttable

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWrite(t *testing.T) {
	reason := "effect -12.1% [-15.0%, -9.1%] excludes 0 and passes the 3% floor; pairs: 4 REPRODUCED faster of 4"
	for _, c := range []struct {
		name  string
		width int
		rows  [][]string
		want  string
	}{
		{"fits", 100, [][]string{{"Get", "-12.1%", "short reason"}},
			"lane  delta   reason\nGet   -12.1%  short reason\n"},
		{"wraps the last column", 70, [][]string{{"Get", "-12.1%", reason}},
			"lane  delta   reason\n" +
				"Get   -12.1%  effect -12.1% [-15.0%, -9.1%] excludes 0 and passes the\n" +
				"              3% floor; pairs: 4 REPRODUCED faster of 4\n"},
		{"below when the room is narrow", 40, [][]string{{"Get", "-12.1%", reason}},
			"lane  delta\n    reason\nGet   -12.1%\n" +
				"    effect -12.1% [-15.0%, -9.1%]\n" +
				"    excludes 0 and passes the 3% floor;\n" +
				"    pairs: 4 REPRODUCED faster of 4\n"},
		{"cells are one line", 100, [][]string{{"a\nb", "x", "y\n z"}}, "lane  delta  reason\na b   x      y z\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, []string{"lane", "delta", "reason"}, c.rows, c.width); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, buf.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, l := range strings.Split(buf.String(), "\n") {
				if Width(l) > c.width {
					t.Errorf("line wider than %d: %q", c.width, l)
				}
			}
		})
	}
}

func TestWrap(t *testing.T) {
	if got, want := Wrap("a verylongword b", 4), []string{"a", "very", "long", "word", "b"}; !cmp.Equal(got, want) {
		t.Errorf("Wrap = %q, want %q", got, want)
	}
	if got := Wrap("µs ±2%", 6); !cmp.Equal(got, []string{"µs ±2%"}) {
		t.Errorf("Wrap counts bytes, not columns: %q", got)
	}
}
