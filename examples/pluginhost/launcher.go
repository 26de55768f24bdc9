package pluginhost

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Launcher starts workers. The scheduler calls Launch for every cold call, at most
// Options.MaxConcurrentStarts at a time, with the call's deadline in ctx.
type Launcher interface {
	// Launch starts a worker for the registration and returns once it can take calls.
	Launch(ctx context.Context, spec LaunchSpec) (Worker, error)
}

// LaunchSpec says what to start: the registration's tenant, plugin and profile. A spec
// with an empty Tenant and Plugin asks for a pristine worker of the profile: started but
// bound to no registration, to be bound (SessionWorker.Bind) by the call that takes it.
type LaunchSpec struct {
	Tenant, Plugin string
	Profile        Profile
}

// Worker is one started worker, owned by one registration. The scheduler never calls it
// from two goroutines at once.
type Worker interface {
	// Call performs one complete exchange. When ctx ends first the worker is abandoned
	// (the scheduler stops it), so Call may return at once without waiting for it.
	Call(ctx context.Context, req Request) ([]byte, error)
	// Stop ends the worker and waits until it is gone.
	Stop() error
	// PID returns the worker's process id (0 when it is not a process).
	PID() int
}

// SessionWorker is a worker that can start unbound and change hands cleanly: the pristine
// reserve and approved-session reuse need it, and ProcessLauncher's workers are ones.
type SessionWorker interface {
	Worker
	// Bind binds an unbound worker (pristine, or released) to tenant/plugin.
	Bind(ctx context.Context, tenant, plugin string) error
	// Release cleans up the session's state and unbinds the worker. An error means the
	// cleanup failed: the worker must not serve anyone else.
	Release(ctx context.Context) error
}

// Request is one call as a worker receives it.
type Request struct {
	Tenant, Plugin, Op string
	Payload            []byte
	// Callback runs an application callback the plugin asks for during the call (the
	// scheduler checks the registration's grants); nil refuses every callback.
	Callback func(ctx context.Context, name string, payload []byte) ([]byte, error)
}

// stopGrace is how long a worker process gets to exit after its stdin closes before it
// is killed.
const stopGrace = 2 * time.Second

// ProcessLauncher starts every worker as an OS process of one program, so a cold start
// costs what a process start costs. The program must serve calls when it finds WorkerEnv
// set (call Serve; see IsWorker): in this repository the test binaries of the scheduler
// and of its lanes do, in their TestMain, so the worker is the very binary being tested
// and nothing has to be built at run time. A worker inherits the host's environment plus
// WorkerEnv, TenantEnv, PluginEnv, HostEnv, the profile's Env and GOMAXPROCS=1 unless
// the environment sets it; its stderr is kept (the last 4 KiB) for error messages.
type ProcessLauncher struct {
	program string
	args    []string
	token   string
}

// NewProcessLauncher returns a launcher of program (with args before the profile's). Each
// launcher has its own random token, passed to its workers in HostEnv, so Survivors finds
// exactly its processes.
func NewProcessLauncher(program string, args ...string) (*ProcessLauncher, error) {
	if program == "" {
		return nil, errors.New("process launcher: no program")
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("process launcher: %w", err)
	}
	return &ProcessLauncher{program: program, args: args, token: hex.EncodeToString(b[:])}, nil
}

// Token returns the value of HostEnv in this launcher's workers.
func (l *ProcessLauncher) Token() string { return l.token }

// Launch starts a worker process and waits, within ctx, for its ready frame.
func (l *ProcessLauncher) Launch(ctx context.Context, spec LaunchSpec) (Worker, error) {
	cmd := exec.Command(l.program, append(append([]string(nil), l.args...), spec.Profile.Args...)...)
	env := append(os.Environ(), WorkerEnv+"=1", HostEnv+"="+l.token)
	if spec.Tenant != "" {
		env = append(env, TenantEnv+"="+spec.Tenant, PluginEnv+"="+spec.Plugin)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		env = append(env, "GOMAXPROCS=1")
	}
	cmd.Env = append(env, spec.Profile.Env...)
	stderr := &tail{max: 4 << 10}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting worker %s/%s: %w", spec.Tenant, spec.Plugin, err)
	}
	name := spec.Tenant + "/" + spec.Plugin
	if spec.Tenant == "" {
		name = "pristine " + spec.Profile.Name
	}
	p := &process{cmd: cmd, in: stdin, out: stdout, stderr: stderr, name: name}
	ready := make(chan error, 1)
	go func() {
		body, err := readFrame(stdout)
		if err == nil {
			_, err = decodeReady(body)
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("worker %s (pid %d) did not become ready: %w%s", p.name, cmd.Process.Pid, err, stderr.suffix())
	}
	return p, nil
}

// process is a worker process.
type process struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.Reader
	stderr *tail
	name   string

	stopOnce sync.Once
	stopErr  error
}

// PID returns the process id.
func (p *process) PID() int { return p.cmd.Process.Pid }

// Call writes the request and reads the response, answering the worker's callback frames
// on the way with req.Callback. When ctx ends first the process is killed, which also
// ends the read.
func (p *process) Call(ctx context.Context, req Request) ([]byte, error) {
	frame, err := encodeRequest(request{tenant: req.Tenant, plugin: req.Plugin, op: req.Op, payload: req.Payload})
	if err != nil {
		return nil, err
	}
	return p.exchange(ctx, frame, func(body []byte) ([]byte, bool, error) {
		if len(body) > 0 && body[0] == kindCallback {
			name, payload, err := decodeCallback(body)
			if err != nil {
				return nil, false, err
			}
			var out []byte
			if req.Callback == nil {
				err = fmt.Errorf("callback %q: the call has no callbacks", name)
			} else {
				out, err = req.Callback(ctx, name, payload)
			}
			if err != nil {
				return encodeCbReply([]byte(err.Error()), true), false, nil
			}
			return encodeCbReply(out, false), false, nil
		}
		return nil, true, nil
	})
}

// Bind binds a pristine or released worker process to tenant/plugin.
func (p *process) Bind(ctx context.Context, tenant, plugin string) error {
	frame, err := encodeBind(tenant, plugin)
	if err != nil {
		return err
	}
	if _, err := p.exchange(ctx, frame, nil); err != nil {
		return fmt.Errorf("binding worker %s to %s/%s: %w", p.name, tenant, plugin, err)
	}
	p.name = tenant + "/" + plugin
	return nil
}

// Release asks the worker process to clean up its session and unbind.
func (p *process) Release(ctx context.Context) error {
	if _, err := p.exchange(ctx, encodeRelease(), nil); err != nil {
		return fmt.Errorf("releasing worker %s: %w", p.name, err)
	}
	p.name = "released"
	return nil
}

// exchange writes frame and reads frames until a response. For every other frame,
// interim returns the frame to write back (or done: it is the answer after all);
// nil interim accepts only a response.
func (p *process) exchange(ctx context.Context, frame []byte, interim func(body []byte) (reply []byte, done bool, err error)) ([]byte, error) {
	type reply struct {
		out []byte
		err error
	}
	done := make(chan reply, 1)
	go func() {
		if _, err := p.in.Write(frame); err != nil {
			done <- reply{err: fmt.Errorf("worker %s: writing the request: %w", p.name, err)}
			return
		}
		for {
			body, err := readFrame(p.out)
			if err != nil {
				done <- reply{err: fmt.Errorf("worker %s: reading the response: %w%s", p.name, err, p.stderr.suffix())}
				return
			}
			if interim != nil && (len(body) == 0 || body[0] != kindResponse) {
				back, isAnswer, err := interim(body)
				if err != nil {
					done <- reply{err: fmt.Errorf("worker %s: %w", p.name, err)}
					return
				}
				if !isAnswer {
					if _, err := p.in.Write(back); err != nil {
						done <- reply{err: fmt.Errorf("worker %s: writing a callback answer: %w", p.name, err)}
						return
					}
					continue
				}
			}
			out, err := decodeResponse(body)
			done <- reply{out, err}
			return
		}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	}
}

// kill ends the process at once and reaps it.
func (p *process) kill() {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Kill()
		_ = p.in.Close()
		_ = p.cmd.Wait()
	})
}

// Stop closes the worker's stdin, which ends Serve, and waits for the process to exit;
// after stopGrace it is killed. An exit with an error status is reported.
func (p *process) Stop() error {
	p.stopOnce.Do(func() {
		_ = p.in.Close()
		timer := time.AfterFunc(stopGrace, func() { _ = p.cmd.Process.Kill() })
		err := p.cmd.Wait()
		if !timer.Stop() {
			err = fmt.Errorf("worker %s (pid %d) did not exit within %s of its stdin closing and was killed: %w", p.name, p.cmd.Process.Pid, stopGrace, ErrWorkerHung)
		} else if err != nil {
			err = fmt.Errorf("worker %s (pid %d): %w%s", p.name, p.cmd.Process.Pid, err, p.stderr.suffix())
		}
		p.stopErr = err
	})
	return p.stopErr
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// Write keeps the end of what is written.
func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

// suffix returns ": stderr: ..." for an error message, or "" when nothing was written.
func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, nil)))
	if s == "" {
		return ""
	}
	return "; stderr: " + s
}
