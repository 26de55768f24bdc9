package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"syscall"
	"time"
)

// Lock is the machine-wide measurement lock: two runs measuring at once contaminate
// each other, so a second run is refused and told who holds the lock, or waits for it
// (LockWait).
type Lock struct {
	f      *os.File
	holder Holder
}

// Holder describes the process holding the lock; it is written into the lock file.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
	Dir     string    `json:"dir"`
}

// ErrLocked is wrapped by AcquireLock's error when another run holds the lock.
var ErrLocked = errors.New("machine lock held")

// LockWait says whether and how long AcquireLock waits for a lock another run holds.
type LockWait struct {
	// Max is the longest wait: 0 refuses at once, naming the holder; WaitForever waits
	// as long as it takes.
	Max time.Duration
	// Waiting, if set, is called once when AcquireLock starts to wait, with the message a
	// refusal would give (who holds the lock), so the caller can say what it waits for.
	Waiting func(msg string)
	// Poll is how often the lock is tried while waiting; 0 means every 200ms.
	Poll time.Duration
}

// WaitForever, as LockWait.Max, waits for the lock as long as it takes.
const WaitForever = time.Duration(math.MaxInt64)

// AcquireLock takes the lock at path. When another run holds it, it refuses at once (the
// error names the holder) or, with w.Max, waits up to that long for the holder to finish,
// trying again every w.Poll; cancelling ctx ends the wait. The lock is an flock, released
// by the kernel when the holder exits for any reason, so a killed run never leaves a stale
// lock.
func AcquireLock(ctx context.Context, path string, h Holder, w LockWait) (*Lock, error) {
	poll := w.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	// The wait is bounded by a timer on the machine's monotonic clock, not by the run's
	// clock (package clock): a fake clock must not make a wait endless.
	var expired <-chan time.Time // nil, never ready, for WaitForever
	if w.Max > 0 && w.Max != WaitForever {
		limit := time.NewTimer(w.Max)
		defer limit.Stop()
		expired = limit.C
	}
	for waited := false; ; waited = true {
		l, err := tryLock(path, h)
		if err == nil || !errors.Is(err, ErrLocked) || w.Max <= 0 {
			return l, err
		}
		if !waited && w.Waiting != nil {
			w.Waiting(err.Error())
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for the machine lock: %w", ctx.Err())
		case <-expired:
			t.Stop()
			if l, err2 := tryLock(path, h); err2 == nil || !errors.Is(err2, ErrLocked) {
				return l, err2
			}
			return nil, fmt.Errorf("%w (waited %s)", err, w.Max.Round(time.Millisecond))
		case <-t.C:
		}
	}
}

// tryLock takes the lock at path without waiting.
func tryLock(path string, h Holder) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if errors.Is(err, os.ErrPermission) {
		// Another user's lock file: an flock needs only a read-only descriptor.
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening lock %s: %w", path, err)
	}
	f.Chmod(0o666) // best effort, so every user of the machine can take the lock
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			var other Holder
			b, _ := os.ReadFile(path)
			if json.Unmarshal(b, &other) == nil && other.PID != 0 {
				where := ""
				if other.Dir != "" {
					where = ", writing " + other.Dir
				}
				return nil, fmt.Errorf("%w: another flipbench run is measuring on this machine (pid %d, %q, since %s%s); wait for it to finish (--wait does), since two runs at once contaminate each other",
					ErrLocked, other.PID, other.Command, other.Since.Format(time.RFC3339), where)
			}
			return nil, fmt.Errorf("%w: another flipbench run is measuring on this machine (lock %s); wait for it to finish (--wait does)", ErrLocked, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	l := &Lock{f: f, holder: h}
	l.describe()
	return l, nil
}

// SetDir records in the lock where the holder writes its receipt, for the message a
// refused run gets.
func (l *Lock) SetDir(dir string) {
	l.holder.Dir = dir
	l.describe()
}

// describe writes the holder into the lock file. It is best effort: the flock is what
// excludes other runs, the description only makes the refusal helpful.
func (l *Lock) describe() {
	b, _ := json.Marshal(l.holder)
	if err := l.f.Truncate(0); err == nil {
		l.f.WriteAt(b, 0)
	}
}

// Release releases the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	err := l.f.Close()
	l.f = nil
	return err
}

// DefaultLockPath is the lock file used when none is configured. It is a fixed path, not
// under $TMPDIR, so that every run on the machine, whatever its environment, meets the
// same lock.
const DefaultLockPath = "/tmp/flipbench.lock"
