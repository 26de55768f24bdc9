package armbuild

import (
	"slices"
	"strings"
	"testing"
)

const diffBody = `diff --git a/work/work.go b/work/work.go
index b69349a80f08d1910d5fa03f5a9463eb688efe71..2a2b2c2d2e2f2a2b2c2d2e2f2a2b2c2d2e2f2a2b 100644
--- a/work/work.go
+++ b/work/work.go
@@ -1,3 +1,3 @@
-const N = 600_000
+const N = 1_200_000
+base-commit: this is content, not a header
diff --git a/new file.txt b/new file.txt
new file mode 100644
index 0000000000000000000000000000000000000000..1111111111111111111111111111111111111111
--- /dev/null
+++ b/new file.txt
@@ -0,0 +1 @@
+hello
diff --git a/gone.go b/gone.go
deleted file mode 100644
index 3333333333333333333333333333333333333333..0000000000000000000000000000000000000000
diff --git a/old.go b/renamed.go
similarity index 100%
rename from old.go
rename to renamed.go
diff --git "a/tab\there" "b/tab\there"
index 4444444444444444444444444444444444444444..5555555555555555555555555555555555555555 100644
GIT binary patch
literal 3
KcmZ>~
`

func TestParsePatch(t *testing.T) {
	wantFiles := []FileChange{
		{Status: "M", Path: "work/work.go"},
		{Status: "A", Path: "new file.txt"},
		{Status: "D", Path: "gone.go"},
		{Status: "R", Path: "renamed.go", From: "old.go"},
		{Status: "M", Path: "tab\there"},
	}
	for _, tc := range []struct {
		name        string
		patch       string
		base, from  string
		preamble    map[string]string
		madeAgainst string
	}{
		{
			name: "archive preamble",
			patch: "flipbench-archive: experiment 001, arm cand\nbranch: proto/x\ntip: 9999999999999999999999999999999999999999\n" +
				"base-ref: main\nbase-commit: 8888888888888888888888888888888888888888\n\n" + diffBody,
			base:        "8888888888888888888888888888888888888888",
			preamble:    map[string]string{"branch": "proto/x", "base-ref": "main"},
			madeAgainst: "it was made against 888888888888",
		},
		{
			name: "format-patch with --base",
			patch: "From 7777777777777777777777777777777777777777 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.com>\nSubject: [PATCH] x\n\n---\n" +
				diffBody + "-- \n\nbase-commit: 6666666666666666666666666666666666666666\n",
			base:        "6666666666666666666666666666666666666666",
			from:        "7777777777777777777777777777777777777777",
			madeAgainst: "it was made against 666666666666",
		},
		{
			name:        "format-patch without --base",
			patch:       "From 7777777777777777777777777777777777777777 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n" + diffBody,
			from:        "7777777777777777777777777777777777777777",
			madeAgainst: "it was made as commit 777777777777, against that commit's parent",
		},
		{
			name:        "bare git diff",
			patch:       diffBody,
			madeAgainst: "it records no base commit; it expects work/work.go at blob b69349a80f08",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := ParsePatch([]byte(tc.patch))
			if info.BaseCommit != tc.base {
				t.Errorf("BaseCommit = %q, want %q", info.BaseCommit, tc.base)
			}
			if info.FromCommit != tc.from {
				t.Errorf("FromCommit = %q, want %q", info.FromCommit, tc.from)
			}
			for k, v := range tc.preamble {
				if info.Preamble[k] != v {
					t.Errorf("Preamble[%s] = %q, want %q", k, info.Preamble[k], v)
				}
			}
			if !slices.Equal(info.Files, wantFiles) {
				t.Errorf("Files = %v\nwant %v", info.Files, wantFiles)
			}
			if got := info.MadeAgainst(); got != tc.madeAgainst {
				t.Errorf("MadeAgainst = %q, want %q", got, tc.madeAgainst)
			}
		})
	}
}

func TestParsePatchEmpty(t *testing.T) {
	info := ParsePatch(nil)
	if len(info.Files) != 0 || info.MadeAgainst() != "it records no base commit" {
		t.Errorf("ParsePatch(nil) = %+v, %q", info, info.MadeAgainst())
	}
}

func TestParsePatchTruncatedHeaders(t *testing.T) {
	// Cut-off or hand-edited headers read as less information, never as a panic.
	for _, p := range []string{"diff --git a/x b/x\nindex \n", "diff --git a/x b/x\nindex", "From \n", "diff --git\n"} {
		info := ParsePatch([]byte(p))
		if info.FirstIndex != "" {
			t.Errorf("ParsePatch(%q): first index %q from a header that has none", p, info.FirstIndex)
		}
	}
}

func TestRenderArchiveREADME(t *testing.T) {
	patch := "branch: proto/x\ntip: 9999999999999999999999999999999999999999\nbase-ref: main\n" +
		"base-commit: 8888888888888888888888888888888888888888\n\n" + diffBody
	got := RenderArchiveREADME(7, "archive/exp-007", []ArchivedPatch{
		{Arm: "candA", File: "candA.patch", SHA256: "abc", Info: ParsePatch([]byte(patch))},
		{Arm: "candB", File: "candB.patch", SHA256: "def", Info: ParsePatch([]byte(diffBody))},
	})
	for _, want := range []string{
		"# Archived prototypes of experiment 007\n",
		"\n## candA\n",
		"- patch: `candA.patch` (sha256 `abc`)\n",
		"- archived from branch `proto/x` at `9999999999999999999999999999999999999999`\n",
		"- applies to commit `8888888888888888888888888888888888888888` (the merge base with the base arm's ref `main`)\n",
		"- files touched (5):\n  - `M work/work.go`\n  - `A new file.txt`\n  - `D gone.go`\n  - `R old.go -> renamed.go`\n",
		"flipbench archive 7 --restore candA    # creates branch exp-007-candA\n",
		"git switch -c exp-007-candA 8888888888888888888888888888888888888888 && git apply --index archive/exp-007/candA.patch",
		"- as an arm of the experiment: `candA: {ref: 8888888888888888888888888888888888888888, patch: archive/exp-007/candA.patch}`\n",
		"\n## candB\n",
		"- applies to: not recorded in the patch\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("README lacks %q\n--- README:\n%s", want, got)
		}
	}
}

func TestReadmeCommit(t *testing.T) {
	const (
		a = "df01a5ad817cb2013c867bf8e2c7862030e16b81"
		b = "8888888888888888888888888888888888888888"
	)
	for _, tc := range []struct {
		name, readme, patch, want string
	}{
		{"one hash in a hand-written README", "# exp 266\n\nMade with `git diff` against commit `" + a + "`, the last...\n    git worktree add --detach /tmp/rr " + a + "\n", "round-robin.patch", a},
		{"no hash", "# exp\n\nno commit here\n", "x.patch", ""},
		{"several hashes, the patch's section decides", "# exp\n\n## candA\n- patch: `candA.patch`\n- applies to `" + a + "`\n\n## candB\n- patch: `candB.patch`\n- applies to `" + b + "`\n", "candB.patch", b},
		{"several hashes, no section names the patch", "# exp\n\n## x\n" + a + "\n## y\n" + b + "\n", "candC.patch", ""},
		{"a longer hex string is not a commit", "# exp\n\n" + a + "00\n", "x.patch", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readmeCommit(tc.readme, tc.patch); got != tc.want {
				t.Errorf("readmeCommit = %q, want %q", got, tc.want)
			}
		})
	}
}
