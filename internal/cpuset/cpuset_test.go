package cpuset

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestParseAndFormat(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []int
		text string
	}{
		{"0", []int{0}, "0"},
		{"1,0", []int{0, 1}, "0-1"},
		{"0-3,6", []int{0, 1, 2, 3, 6}, "0-3,6"},
		{" 2 , 2-3 ", []int{2, 3}, "2-3"},
		{"0,2,4", []int{0, 2, 4}, "0,2,4"},
	} {
		got, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Parse(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if f := Format(got); f != tt.text {
			t.Errorf("Format(%v) = %q, want %q", got, f, tt.text)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for in, want := range map[string]string{
		"":      "empty CPU list",
		"a":     `"a" is not a CPU number or range`,
		"-1":    `"-1" is not a CPU number or range`,
		"3-1":   `CPU range "3-1" runs backwards`,
		"0,,1":  `"" is not a CPU number or range`,
		"99999": "CPU 99999 is above 4095",
		"0-":    `"0-" is not a CPU number or range`,
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestCheck(t *testing.T) {
	have, err := Allowed()
	if err != nil || len(have) == 0 {
		t.Fatalf("Allowed() = %v, %v", have, err)
	}
	if err := Check(have[:1]); err != nil {
		t.Errorf("Check(%v): %v", have[:1], err)
	}
	err = Check([]int{MaxCPU})
	if err == nil || err.Error() != "CPU 4095, which is not available here: this machine runs flipbench on CPUs "+Format(have) {
		t.Errorf("Check(4095) = %v", err)
	}
}

// TestPinThreadIsInherited starts a process from a pinned thread: it runs on the pinned
// CPU only, and the thread gets its CPUs back.
func TestPinThreadIsInherited(t *testing.T) {
	have, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	cpu := have[len(have)-1]
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	restore, err := PinThread([]int{cpu})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("grep", "Cpus_allowed_list", "/proc/self/status")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if rerr := restore(); rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(strings.TrimPrefix(string(out), "Cpus_allowed_list:")); got != Format([]int{cpu}) {
		t.Errorf("the child runs on CPUs %q, want %d", got, cpu)
	}
	after, err := Allowed()
	if err != nil || !slices.Equal(after, have) {
		t.Errorf("after the restore the thread runs on %v (%v), want %v", after, err, have)
	}
}
