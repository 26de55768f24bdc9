package mdtable

import (
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	var b strings.Builder
	err := Write(&b, []string{"lane", "reason"}, [][]string{{"a", "x | y\nz"}, {"bb", "ok"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "| lane | reason   |\n|:-----|:---------|\n| a    | x \\| y z |\n| bb   | ok       |\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
