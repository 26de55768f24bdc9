package armbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/flipbench/flipbench/internal/atomicfile"
	"github.com/flipbench/flipbench/model/receipt"
)

// KeyFormat is the version of the cache key; changing how arms are built bumps it, which
// retires every cached binary. Format 2 keeps a gotest harness's testdata/ in the entry.
const KeyFormat = 2

// Key is everything a git arm's binary depends on. Two arms with equal keys build the same
// binary, so a cached one is used instead of building again.
type Key struct {
	Format int    `json:"format"`
	Kind   string `json:"kind"` // harness kind: gotest or exec
	Commit string `json:"commit"`
	// DiffSHA256 is the hash of the uncommitted changes of a WORKTREE arm.
	DiffSHA256  string `json:"diff_sha256,omitempty"`
	PatchSHA256 string `json:"patch_sha256,omitempty"`
	// HarnessSHA256 identifies the harness source copied over the arm.
	HarnessSHA256 string `json:"harness_sha256"`
	// Dir is where the build runs, relative to the repository root (the ledger root's
	// folder), and Package the harness package as written.
	Dir     string   `json:"dir"`
	Package string   `json:"package,omitempty"`
	Tags    []string `json:"tags,omitempty"` // sorted: the order does not change a build
	Ldflags string   `json:"ldflags,omitempty"`
	// Build is the build command template, placeholders unexpanded.
	Build []string `json:"build"`
	// Toolchain holds the go env values that change what go builds (GOVERSION, GOOS,
	// GOARCH, CGO_ENABLED, GOFLAGS, ...); empty values are left out.
	Toolchain map[string]string `json:"toolchain,omitempty"`
}

// Sum returns the key's hash: the SHA-256 of its JSON form (map keys sorted), in hex.
func (k Key) Sum() string {
	k.Tags = slices.Sorted(slices.Values(k.Tags))
	if len(k.Tags) == 0 {
		k.Tags = nil
	}
	tc := map[string]string{}
	for name, v := range k.Toolchain {
		if v != "" {
			tc[name] = v
		}
	}
	k.Toolchain = tc
	b, err := json.Marshal(k)
	if err != nil {
		panic(err) // a struct of strings always marshals
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// cacheDirLen is how many hex digits of a key's sum name its cache folder.
const cacheDirLen = 32

// cacheEntry is one cached binary: .flipbench/cache/<sum>/<bin> and build.json beside it,
// and for a gotest harness the lanes' working directory, <sum>/pkg, holding a copy of the
// harness package's testdata/ as it was built.
type cacheEntry struct {
	Key Key    `json:"key"`
	Bin string `json:"bin"` // file name inside the entry's folder
	// RunDir is the lanes' working directory inside the entry's folder (RunDirName), or
	// "" when the lanes run elsewhere (exec harnesses).
	RunDir  string    `json:"run_dir,omitempty"`
	SHA256  string    `json:"sha256"`
	Built   time.Time `json:"built"`
	Seconds float64   `json:"seconds"` // how long the build took
	// path is the binary's absolute path (not stored).
	path string
}

const cacheMeta = "build.json"

// cacheDir returns the folder of a key's entry.
func cacheDir(cache string, k Key) string {
	return filepath.Join(cache, k.Sum()[:cacheDirLen])
}

// lookup returns the cached entry for k, or nil when there is none or it does not check
// out (its binary missing or changed since it was built, or, when needRunDir, without the
// folder its lanes run in).
func lookup(cache string, k Key, needRunDir bool) *cacheEntry {
	dir := cacheDir(cache, k)
	var e cacheEntry
	if err := receipt.ReadJSON(filepath.Join(dir, cacheMeta), &e); err != nil {
		return nil
	}
	if e.Key.Sum() != k.Sum() || e.Bin == "" || filepath.Base(e.Bin) != e.Bin {
		return nil
	}
	e.path = filepath.Join(dir, e.Bin)
	sum, err := receipt.HashFile(e.path)
	if err != nil || sum != e.SHA256 {
		return nil
	}
	if e.RunDir != "" && (filepath.Base(e.RunDir) != e.RunDir || !isDir(filepath.Join(dir, e.RunDir))) {
		return nil
	}
	if needRunDir && e.RunDir == "" {
		return nil
	}
	return &e
}

// RunDirName is the folder of a cache entry in which gotest lanes run: the harness
// package's testdata/, copied from the source the binary was built from, is in it.
const RunDirName = "pkg"

// runDir returns the lanes' working directory of the entry, or "".
func (e *cacheEntry) runDir() string {
	if e.RunDir == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(e.path), e.RunDir)
}

// store moves a freshly built binary (alone in its temporary folder tmp) into the cache
// under k. When another process stored the same key meanwhile, its entry is used.
func store(cache, tmp string, e cacheEntry) (*cacheEntry, error) {
	if err := atomicfile.WriteJSON(filepath.Join(tmp, cacheMeta), e); err != nil {
		return nil, err
	}
	dir := cacheDir(cache, e.Key)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("replacing cached build %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if errors.Is(err, os.ErrExist) {
			if got := lookup(cache, e.Key, e.RunDir != ""); got != nil {
				os.RemoveAll(tmp)
				return got, nil
			}
		}
		return nil, fmt.Errorf("storing the build in %s: %w", dir, err)
	}
	e.path = filepath.Join(dir, e.Bin)
	return &e, nil
}

// copyTestdata copies the folder src (a harness package's testdata/, which may not exist)
// to dst, keeping file modes and symbolic links. The folder that holds dst is made even
// when there is nothing to copy.
func copyTestdata(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(src); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		default:
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, data, info.Mode().Perm())
		}
	})
}
