package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flipbench/flipbench/model/receipt"
)

// Identical reports whether every candidate arm would run exactly what the base runs: the
// same binary (by sha256), arguments, environment and lane command, in the same working
// directory or in one with the same data (sameData). Measuring such arms can only measure
// noise, so the gate passes them at once and compare says so instead of measuring
// (docs/gate.md).
func Identical(arms []receipt.Arm) bool {
	if len(arms) < 2 {
		return false
	}
	base := arms[0]
	for _, a := range arms[1:] {
		if !sameProgram(a, base) || !sameData(a.Dir, base.Dir) {
			return false
		}
	}
	return true
}

// sameProgram reports whether two arms run the same binary (by sha256) with the same
// arguments, environment, lane command and harness kind.
func sameProgram(a, b receipt.Arm) bool {
	return a.SHA256 != "" && a.SHA256 == b.SHA256 && slices.Equal(a.Args, b.Args) && slices.Equal(sorted(a.Env), sorted(b.Env)) &&
		slices.Equal(a.Command, b.Command) && a.Kind == b.Kind
}

// sameData reports whether the lane processes of two arms see the same files: the same
// working directory, or two (each arm's checkout of a package) whose files other than Go
// sources have the same names and contents. Go sources are compiled into the binary, which
// is compared by its sha256; everything else (testdata, inputs) a process may read. Any
// error reading them counts as different.
func sameData(a, b string) bool {
	if a == b {
		return true
	}
	if a == "" || b == "" {
		return false
	}
	da, err := dataDigest(a)
	if err != nil {
		return false
	}
	db, err := dataDigest(b)
	return err == nil && da == db
}

// dataDigest hashes the relative path and content of every regular file under dir except
// Go sources, in walk order (lexical), and the target of every symbolic link.
func dataDigest(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			io.WriteString(h, "link\x00"+rel+"\x00"+target+"\x00")
			return nil
		case strings.HasSuffix(rel, ".go") || !d.Type().IsRegular():
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "file\x00%s\x00%d\x00", rel, info.Size())
		_, err = io.Copy(h, f)
		return err
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// sorted returns a sorted copy of xs.
func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}
