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

	"github.com/flipbench/flipbench/receipt"
)

// KeyFormat is the version of the cache key; changing how arms are built bumps it, which
// retires every cached binary.
const KeyFormat = 1

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

// cacheEntry is one cached binary: .flipbench/cache/<sum>/<bin> and build.json beside it.
type cacheEntry struct {
	Key     Key       `json:"key"`
	Bin     string    `json:"bin"` // file name inside the entry's folder
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
// out (its binary missing or changed since it was built).
func lookup(cache string, k Key) *cacheEntry {
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
	return &e
}

// store moves a freshly built binary (alone in its temporary folder tmp) into the cache
// under k. When another process stored the same key meanwhile, its entry is used.
func store(cache, tmp string, e cacheEntry) (*cacheEntry, error) {
	if err := receipt.WriteJSON(filepath.Join(tmp, cacheMeta), e); err != nil {
		return nil, err
	}
	dir := cacheDir(cache, e.Key)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("replacing cached build %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if errors.Is(err, os.ErrExist) {
			if got := lookup(cache, e.Key); got != nil {
				os.RemoveAll(tmp)
				return got, nil
			}
		}
		return nil, fmt.Errorf("storing the build in %s: %w", dir, err)
	}
	e.path = filepath.Join(dir, e.Bin)
	return &e, nil
}
