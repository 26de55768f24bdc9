package mdtable

import (
	"errors"
	"fmt"
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

func TestOneLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: ""},
		{name: "already one line", in: "exited with status 2", want: "exited with status 2"},
		{name: "lines and runs of space", in: "  panic: boom\n\tgoroutine 1  [running]:\n", want: "panic: boom goroutine 1 [running]:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OneLine(tt.in); got != tt.want {
				t.Errorf("OneLine(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// failWriter fails every write after the first ok ones.
type failWriter struct {
	ok  int
	err error
}

func (f *failWriter) Write(p []byte) (int, error) {
	if f.ok == 0 {
		return 0, f.err
	}
	f.ok--
	return len(p), nil
}

func TestErrWriter(t *testing.T) {
	boom := errors.New("disk full")
	fw := &failWriter{ok: 1, err: boom}
	ew := NewErrWriter(fw)
	fmt.Fprintf(ew, "first\n")
	if ew.Err() != nil {
		t.Fatalf("Err after a good write = %v, want nil", ew.Err())
	}
	fmt.Fprintf(ew, "second\n")
	fw.ok = 5 // the writer would take more, but ErrWriter must not try
	if n, err := ew.Write([]byte("third\n")); n != 0 || err != boom {
		t.Errorf("Write after a failure = %d, %v; want 0, %v", n, err, boom)
	}
	if fw.ok != 5 {
		t.Errorf("ErrWriter wrote to the writer after a failure")
	}
	if ew.Err() != boom {
		t.Errorf("Err = %v, want the first error %v", ew.Err(), boom)
	}
}
