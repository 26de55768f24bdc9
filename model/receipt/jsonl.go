package receipt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// appendJSONL appends each value as one JSON line to the file at path and syncs it: the
// append-only logs of a receipt (looks, warnings) survive a kill between two writes.
func appendJSONL[T any](path string, values ...T) error {
	var b bytes.Buffer
	for _, v := range values {
		line, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(append(line, '\n'))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readJSONL reads a file appendJSONL wrote; a missing file is none, and a torn last line
// (a kill during a write, with no newline after it) is dropped.
func readJSONL[T any](path string) ([]T, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []T
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			if i == len(lines)-1 {
				break
			}
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, v)
	}
	return out, nil
}
