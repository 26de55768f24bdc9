package armbuild

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/flipbench/flipbench/model/receipt"
)

// PatchInfo is what a patch file says about itself.
//
// A patch written by Archive starts with a preamble of "key: value" lines before the first
// "diff --git" line (git apply skips it), naming the experiment, arm, branch and, above
// all, the base-commit it applies to. A patch from git format-patch --base carries the same
// "base-commit:" line at its end, and a "From <sha>" header naming the commit it was made
// from. A bare git diff has neither; its "index" lines still name the blobs it expects.
type PatchInfo struct {
	// BaseCommit is the commit the patch applies to ("base-commit:").
	BaseCommit string
	// FromCommit is the commit a format-patch patch was made from ("From <sha> ...").
	FromCommit string
	// Preamble holds the "key: value" lines before the first diff, as written by Archive
	// (experiment, arm, branch, tip, base-ref, base-commit).
	Preamble map[string]string
	// Files lists the files the patch touches, in order.
	Files []FileChange
	// FirstIndex is the first file's preimage blob from its "index" line, with its path,
	// for a patch that records no base commit.
	FirstIndex, FirstIndexPath string
}

// FileChange is one file a patch touches.
type FileChange struct {
	// Status is A (added), D (deleted), R (renamed; From is the old path) or M.
	Status string
	Path   string
	From   string
}

// String formats the change like git diff --name-status.
func (f FileChange) String() string {
	if f.Status == "R" {
		return fmt.Sprintf("R %s -> %s", f.From, f.Path)
	}
	return f.Status + " " + f.Path
}

// ParsePatch reads what a patch says about itself. It never fails: a patch it cannot read
// simply says less.
func ParsePatch(data []byte) PatchInfo {
	info := PatchInfo{Preamble: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	inDiff := false
	var cur *FileChange
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "diff --git "):
			inDiff = true
			info.Files = append(info.Files, FileChange{Status: "M", Path: diffGitPath(line)})
			cur = &info.Files[len(info.Files)-1]
			continue
		case strings.HasPrefix(line, "base-commit: "):
			info.BaseCommit = strings.TrimSpace(strings.TrimPrefix(line, "base-commit: "))
			continue
		}
		if !inDiff {
			if rest, ok := strings.CutPrefix(line, "From "); ok && info.FromCommit == "" {
				if f := strings.Fields(rest); len(f) > 0 && isHex(f[0]) && len(f[0]) >= 7 {
					info.FromCommit = f[0]
				}
				continue
			}
			if k, v, ok := strings.Cut(line, ": "); ok && !strings.ContainsAny(k, " \t") && k != "" {
				info.Preamble[strings.ToLower(k)] = strings.TrimSpace(v)
			}
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case strings.HasPrefix(line, "new file mode "):
			cur.Status = "A"
		case strings.HasPrefix(line, "deleted file mode "):
			cur.Status = "D"
		case strings.HasPrefix(line, "rename from "):
			cur.Status, cur.From = "R", unquote(strings.TrimPrefix(line, "rename from "))
		case strings.HasPrefix(line, "rename to "):
			cur.Path = unquote(strings.TrimPrefix(line, "rename to "))
		case strings.HasPrefix(line, "index ") && info.FirstIndex == "" && len(strings.Fields(line)) >= 2:
			if pre, _, ok := strings.Cut(strings.Fields(line)[1], ".."); ok && strings.Trim(pre, "0") != "" {
				info.FirstIndex, info.FirstIndexPath = pre, cur.Path
			}
		case strings.HasPrefix(line, "@@"), strings.HasPrefix(line, "GIT binary patch"):
			cur = nil // the header is over; hunk lines are content
		}
	}
	if info.BaseCommit == "" {
		info.BaseCommit = info.Preamble["base-commit"]
	}
	return info
}

// MadeAgainst says which commit the patch was made against, for the message of a patch
// that does not apply.
func (p PatchInfo) MadeAgainst() string {
	switch {
	case p.BaseCommit != "":
		return "it was made against " + receipt.ShortHash(p.BaseCommit)
	case p.FromCommit != "":
		return "it was made as commit " + receipt.ShortHash(p.FromCommit) + ", against that commit's parent"
	case p.FirstIndex != "":
		return fmt.Sprintf("it records no base commit; it expects %s at blob %s", p.FirstIndexPath, receipt.ShortHash(p.FirstIndex))
	default:
		return "it records no base commit"
	}
}

// diffGitPath returns the new path of a "diff --git a/P b/P" line. Quoted paths are
// unquoted; for a rename, "rename to" corrects it later.
func diffGitPath(line string) string {
	rest := strings.TrimPrefix(line, "diff --git ")
	if strings.HasPrefix(rest, `"`) {
		// "a/x y" "b/x y": take the second quoted string.
		if i := strings.LastIndex(rest, ` "`); i > 0 {
			return strings.TrimPrefix(unquote(rest[i+1:]), "b/")
		}
	}
	// a/P b/P with the same P: the line is symmetric around its middle.
	if len(rest) >= 5 && (len(rest)-1)%2 == 0 {
		half := (len(rest) - 1) / 2
		a, b := rest[:half], rest[half+1:]
		if strings.HasPrefix(a, "a/") && strings.HasPrefix(b, "b/") && a[2:] == b[2:] {
			return b[2:]
		}
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// unquote undoes git's C-style quoting of a path, when it is quoted.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// patchOrigin says which commit a patch file was made against, for the message of a
// patch that does not apply: from the patch itself (see PatchInfo.MadeAgainst) or, when
// it records none, from the archive README beside it.
func patchOrigin(patchFile string, data []byte) string {
	info := ParsePatch(data)
	if info.BaseCommit == "" && info.FromCommit == "" {
		if c := readmeBase(patchFile); c != "" {
			return "the archive README says it was made against " + receipt.ShortHash(c)
		}
	}
	return info.MadeAgainst()
}

// readmeBase returns the commit that the archive README beside a patch gives for it, or "".
func readmeBase(patchFile string) string {
	readme, err := os.ReadFile(filepath.Join(filepath.Dir(patchFile), ArchiveREADME))
	if err != nil {
		return ""
	}
	return readmeCommit(string(readme), filepath.Base(patchFile))
}

// readmeCommit finds the commit an archive README gives for a patch: the only full commit
// hash in the README or, when it names several, the only one in the section (between
// headings) that mentions the patch's file name. It returns "" when that is ambiguous.
func readmeCommit(readme, patchName string) string {
	if c := onlyHash(readme); c != "" {
		return c
	}
	var sections []string
	var cur strings.Builder
	for l := range strings.SplitSeq(readme, "\n") {
		if strings.HasPrefix(l, "#") && cur.Len() > 0 {
			sections = append(sections, cur.String())
			cur.Reset()
		}
		cur.WriteString(l + "\n")
	}
	sections = append(sections, cur.String())
	found := ""
	for _, s := range sections {
		if !strings.Contains(s, patchName) {
			continue
		}
		c := onlyHash(s)
		if c == "" || found != "" && c != found {
			return ""
		}
		found = c
	}
	return found
}

// onlyHash returns the one distinct 40-digit hash in s, or "".
func onlyHash(s string) string {
	hashes := regexp.MustCompile(`\b[0-9a-f]{40}\b`).FindAllString(s, -1)
	if len(hashes) == 0 {
		return ""
	}
	for _, h := range hashes[1:] {
		if h != hashes[0] {
			return ""
		}
	}
	return hashes[0]
}
