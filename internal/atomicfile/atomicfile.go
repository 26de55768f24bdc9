// Package atomicfile writes files so that a reader, or a process killed in the middle of
// the write, sees the old content or the new one, never a cut one: the data goes to a
// temporary file beside the target (named by owner.TempName, so what a killed writer
// leaves is recognised and removed by owner.RemoveStaleTemps), is synced, then renamed over
// the target.
package atomicfile

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/flipbench/flipbench/internal/owner"
)

// WriteJSON writes v as indented JSON, with a final newline, to path atomically.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return Write(path, append(b, '\n'))
}

// Write writes data to path atomically (temporary file, sync, rename). A new file gets
// the mode the umask gives (0644 under the usual 022), a replaced file keeps its mode.
func Write(path string, data []byte) error {
	tmp, err := CreateTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		if err := tmp.Chmod(st.Mode().Perm()); err != nil {
			tmp.Close()
			return err
		}
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// CreateTemp creates a new temporary file in dir whose name ends in base, with the mode
// the umask gives (os.CreateTemp would make it 0600, and a rename would keep that).
func CreateTemp(dir, base string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, owner.TempName(strconv.FormatUint(rand.Uint64()%1e9, 10), base))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}
