package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCommand(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings, in order
		stderr string
	}{
		{name: "doctor flags scenario A", args: []string{"doctor"}, code: 1, stdout: []string{
			"scenario A: over-committed (2 of 3 checks failed)\n",
			"  FAIL load: load 125% > 100%",
			"  ok   typical: max_age 66 ms >= p50 + transport = 41 ms + 3 ms = 44 ms",
			"  FAIL conservative: max_age 66 ms < p99 x 1.10 + transport = 68 ms + 3 ms = 71 ms",
		}},
		{name: "doctor passes the comfortable scenario", args: []string{"doctor", "-scenario", "comfortable"}, code: 0, stdout: []string{
			"scenario comfortable: the contract holds\n", "  ok   load:", "  ok   typical:", "  ok   conservative:",
		}},
		{name: "a flag changes the contract", args: []string{"doctor", "-max-age", "71ms", "-load", "0.9"}, code: 0, stdout: []string{
			"scenario A: the contract holds\n", "ok   conservative: max_age 71 ms >= p99 x 1.10 + transport = 68 ms + 3 ms = 71 ms",
		}},
		{name: "run on the virtual clock", args: []string{"run", "-seed", "2"}, code: 0, stdout: []string{
			"scenario A, seed 2, virtual clock: 361 frames over 3s\n",
			"  doctor      over-committed (load, conservative failed): see freshness doctor\n",
			"  fifo ", "  pessimistic 0 usable (0/s, 0.0% of frames), 0 completed obsolete, 361 discarded before dispatch, 0 superseded; 0 past the promise, 0 variant switches; stale compute 0 ms of 0 ms; age at delivery -\n",
			"  optimistic ",
		}},
		{name: "run one policy on a real clock", args: []string{"run", "-policy", "pessimistic", "-real", "-scale", "0.05"}, code: 0, stdout: []string{
			"scenario A, seed 1, real clock, scale 0.05: 361 frames over 3s\n", "  doctor      over-committed", "  pessimistic 0 usable",
		}},
		{name: "doctor checks the promise apart from max_age", args: []string{"doctor", "-scenario", "variants"}, code: 1, stdout: []string{
			"scenario variants: over-committed", "  ok   deadline: deadline 55 ms >= p99 x 1.10 + transport = 47 ms (variant full)",
		}},
		{name: "run the variants scenario", args: []string{"run", "-scenario", "variants", "-policy", "optimistic"}, code: 0, stdout: []string{
			"scenario variants, seed 1, virtual clock: 189 frames over 1s\n", "  doctor      over-committed (conservative failed)", "  optimistic ",
		}},
		{name: "unknown scenario", args: []string{"doctor", "-scenario", "B"}, code: 2, stderr: "freshness: -scenario B: unknown scenario (have A, variants, comfortable, underload)\n"},
		{name: "invalid contract", args: []string{"doctor", "-workers", "0"}, code: 2, stderr: "freshness: scenario A: workers 0: want at least 1\n"},
		{name: "unknown policy", args: []string{"run", "-policy", "eager"}, code: 2, stderr: `freshness: -policy: unknown policy "eager" (want fifo, pessimistic or optimistic)` + "\n"},
		{name: "bad scale", args: []string{"run", "-real", "-scale", "0"}, code: 2, stderr: "freshness: -scale: time scale 0: want a positive factor"},
		{name: "positional argument", args: []string{"doctor", "A"}, code: 2, stderr: `freshness doctor: unexpected argument "A"`},
		{name: "unknown flag", args: []string{"doctor", "-maxage", "1s"}, code: 2, stderr: "flag provided but not defined: -maxage"},
		{name: "unknown command", args: []string{"check"}, code: 2, stderr: `freshness: unknown command "check"`},
		{name: "no command", code: 2, stderr: "usage: freshness doctor|run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(tc.args, &out, &errOut); code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out.String(), errOut.String())
			}
			rest := out.String()
			for _, s := range tc.stdout {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Errorf("stdout lacks %q (in order):\n%s", s, out.String())
					break
				}
				rest = rest[i+len(s):]
			}
			if !strings.Contains(errOut.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tc.stderr)
			}
			if tc.stderr == "" && errOut.Len() > 0 {
				t.Errorf("unexpected stderr: %s", errOut.String())
			}
		})
	}
}
