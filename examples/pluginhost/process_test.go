package pluginhost

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// processScheduler returns a scheduler whose workers are processes of this test binary
// (TestMain serves calls when WorkerEnv is set), and checks at cleanup that none of them
// is left running.
func processScheduler(t testing.TB, opt Options) (*Scheduler, *ProcessLauncher) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewProcessLauncher(exe)
	if err != nil {
		t.Fatal(err)
	}
	opt.Launcher = l
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		pids, err := Survivors(l.Token())
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) != 0 {
			t.Errorf("worker processes still running after Close: %v", pids)
		}
	})
	return s, l
}

// whoami calls the worker's whoami operation and returns tenant/plugin, pid and the calls
// the worker had answered before.
func whoami(t *testing.T, p *Plugin) (binding string, pid string, before string, res Result) {
	t.Helper()
	res, err := p.InvokeMeasured(context.Background(), "whoami", nil)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(res.Output), "/")
	if len(parts) != 4 {
		t.Fatalf("whoami answered %q", res.Output)
	}
	return parts[0] + "/" + parts[1], parts[2], parts[3], res
}

// TestProcessWorkers runs real worker processes: a registration's calls reuse its
// process; an evicted registration gets a new process; another tenant's call never
// reaches a used process; and Close leaves no process running.
func TestProcessWorkers(t *testing.T) {
	s, l := processScheduler(t, Options{MaxWorkers: 2})
	a, err := s.Register("A", "p", Profile{MemoryMiB: 64}, Normal)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Register("B", "p", Profile{MemoryMiB: 64}, Normal)
	c, _ := s.Register("C", "p", Profile{MemoryMiB: 64}, Normal)

	bind, pidA, before, res := whoami(t, a)
	if bind != "A/p" || before != "0" || !res.Cold || res.PID == 0 {
		t.Fatalf("A's first call: %s pid %s after %s calls, cold %v", bind, pidA, before, res.Cold)
	}
	_, pidA2, before, res := whoami(t, a)
	if pidA2 != pidA || before != "1" || res.Cold {
		t.Errorf("A's second call: pid %s (first %s) after %s calls, cold %v; want the same process, warm", pidA2, pidA, before, res.Cold)
	}
	bind, pidB, _, _ := whoami(t, b)
	if bind != "B/p" || pidB == pidA {
		t.Errorf("B's call was served by %s pid %s (A's pid %s)", bind, pidB, pidA)
	}
	if pids, err := Survivors(l.Token()); err != nil || len(pids) != 2 {
		t.Errorf("two workers should be alive: %v, %v", pids, err)
	}
	whoami(t, c) // evicts A's worker, the least recently used
	bind, pidA3, before, res := whoami(t, a)
	if bind != "A/p" || pidA3 == pidA || before != "0" || !res.Cold {
		t.Errorf("A after its eviction: %s pid %s (old %s) after %s calls, cold %v; want a new process", bind, pidA3, pidA, before, res.Cold)
	}
	snap := s.Snapshot()
	if snap.Starts != 4 || snap.Evictions != 2 || snap.ColdCalls != 4 || snap.WarmCalls != 1 || snap.Workers != 2 {
		t.Errorf("snapshot: %+v", snap)
	}

	out, err := a.Invoke(context.Background(), "echo", []byte("payload"))
	if err != nil || string(out) != "payload" {
		t.Errorf("echo: %q, %v", out, err)
	}
	if _, err := a.Invoke(context.Background(), "sleep", []byte("1ms")); err != nil {
		t.Errorf("sleep: %v", err)
	}
	out, err = a.Invoke(context.Background(), "spin", []byte("10"))
	if err != nil || len(out) != 64 {
		t.Errorf("spin: %q, %v", out, err)
	}
	var pe *PluginError
	if _, err := a.Invoke(context.Background(), "fail", []byte("on purpose")); !errors.As(err, &pe) || pe.Message != "on purpose" {
		t.Errorf("fail: %v", err)
	}
	if _, err := a.Invoke(context.Background(), "nope", nil); !errors.As(err, &pe) {
		t.Errorf("an unknown operation: %v", err)
	}
	if _, pid, _, res := whoami(t, a); pid != pidA3 || res.Cold {
		t.Errorf("plugin errors must not cost the worker: pid %s (was %s), cold %v", pid, pidA3, res.Cold)
	}
}

// TestProcessRefusesOtherTenant: a worker process answers only its own registration's
// calls, so even a scheduler bug could not make a used worker serve another tenant.
func TestProcessRefusesOtherTenant(t *testing.T) {
	_, l := processScheduler(t, Options{})
	w, err := l.Launch(context.Background(), LaunchSpec{Tenant: "A", Plugin: "p", Profile: Profile{MemoryMiB: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if out, err := w.Call(context.Background(), Request{Tenant: "A", Plugin: "p", Op: "echo", Payload: []byte("x")}); err != nil || string(out) != "x" {
		t.Fatalf("own call: %q, %v", out, err)
	}
	var pe *PluginError
	_, err = w.Call(context.Background(), Request{Tenant: "B", Plugin: "p", Op: "echo"})
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "worker of A/p got a call of B/p") {
		t.Errorf("another tenant's call: %v", err)
	}
	if err := w.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if pids, _ := Survivors(l.Token()); len(pids) != 0 {
		t.Errorf("the stopped worker is still running: %v", pids)
	}
}

// TestProcessTimeout: a call past its timeout kills its worker process.
func TestProcessTimeout(t *testing.T) {
	s, l := processScheduler(t, Options{NormalTimeout: 300 * time.Millisecond})
	a, _ := s.Register("A", "p", Profile{MemoryMiB: 64}, Normal)
	if _, err := a.Invoke(context.Background(), "sleep", []byte("1m")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("returned %v, want ErrTimeout", err)
	}
	deadline := time.Now().Add(waitBound)
	for {
		pids, err := Survivors(l.Token())
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the timed-out worker is still running: %v", pids)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLauncherErrors: a program that is not a worker fails its start with what it wrote.
func TestLauncherErrors(t *testing.T) {
	if _, err := NewProcessLauncher(""); err == nil {
		t.Error("a launcher without a program was created")
	}
	l, err := NewProcessLauncher("/bin/sh", "-c", "echo not a worker >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Launch(context.Background(), LaunchSpec{Tenant: "A", Plugin: "p"})
	if err == nil || !strings.Contains(err.Error(), "did not become ready") || !strings.Contains(err.Error(), "not a worker") {
		t.Errorf("Launch of a non-worker: %v", err)
	}
}

// TestWire round-trips every frame and refuses damaged ones.
func TestWire(t *testing.T) {
	req := request{tenant: "tenant", plugin: "plugin", op: "op", payload: []byte("payload")}
	frame, err := encodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(frame) != requestSize(req.tenant, req.plugin, req.op, req.payload) {
		t.Errorf("frame of %d bytes, requestSize says %d", len(frame), requestSize(req.tenant, req.plugin, req.op, req.payload))
	}
	body, err := readFrame(bytes.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRequest(body)
	if err != nil || got.tenant != req.tenant || got.plugin != req.plugin || got.op != req.op || string(got.payload) != "payload" {
		t.Errorf("request round trip: %+v, %v", got, err)
	}
	for i := 1; i < len(body); i++ {
		if _, err := decodeRequest(body[:i]); err == nil && i < 1+2+len(req.tenant)+2+len(req.plugin)+2+len(req.op) {
			t.Errorf("a request cut to %d bytes decoded", i)
		}
	}
	if _, err := readFrame(bytes.NewReader(frame[:len(frame)-1])); err == nil {
		t.Error("a truncated frame was read")
	}
	if _, err := readFrame(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff})); err == nil {
		t.Error("a frame above the limit was read")
	}
	for _, failed := range []bool{false, true} {
		body, _ := readFrame(bytes.NewReader(encodeResponse([]byte("out"), failed)))
		out, err := decodeResponse(body)
		var pe *PluginError
		if failed != errors.As(err, &pe) || (!failed && string(out) != "out") {
			t.Errorf("response failed=%v: %q, %v", failed, out, err)
		}
	}
	body, _ = readFrame(bytes.NewReader(encodeReady(4242)))
	if pid, err := decodeReady(body); pid != 4242 || err != nil {
		t.Errorf("ready: %d, %v", pid, err)
	}
	if _, err := encodeRequest(request{tenant: strings.Repeat("x", 70000)}); err == nil {
		t.Error("a name longer than 65535 bytes was encoded")
	}
}
