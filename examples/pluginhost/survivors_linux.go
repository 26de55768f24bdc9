package pluginhost

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Survivors returns the process ids of every running process whose environment holds
// HostEnv=token: the workers of one ProcessLauncher (see ProcessLauncher.Token) that are
// still alive. It reads /proc; a process that exits while it looks is skipped. After a
// scheduler's Close it must return none.
func Survivors(token string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	marker := []byte(HostEnv + "=" + token)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // exited meanwhile, or not ours to read: not one of our workers either way
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, marker) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids, nil
}
