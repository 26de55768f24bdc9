package pluginhost

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// The environment a worker process is started with. WorkerEnv marks the process as a
// worker; the others bind it to its registration and its host.
const (
	// WorkerEnv is set to "1" in a worker process: a program that finds it set serves
	// calls (Serve) instead of doing what it normally does.
	WorkerEnv = "PLUGINHOST_WORKER"
	// TenantEnv and PluginEnv name the registration the worker was started for. A
	// worker refuses calls of any other tenant or plugin.
	TenantEnv = "PLUGINHOST_TENANT"
	PluginEnv = "PLUGINHOST_PLUGIN"
	// HostEnv carries the launching host's token, by which Survivors finds the host's
	// worker processes.
	HostEnv = "PLUGINHOST_HOST"
)

// IsWorker reports whether the environment (read through getenv, e.g. os.Getenv) marks
// this process as a worker.
func IsWorker(getenv func(string) string) bool { return getenv(WorkerEnv) == "1" }

// Serve is the worker side: the plugin program. It announces itself with a ready frame on
// out, then answers requests read from in, one at a time, until in reaches its end (the
// host closed the pipe or died), which ends it with a nil error. getenv supplies the
// worker's environment: the tenant and plugin it is bound to.
//
// The plugin's operations are workloads whose cost the caller chooses:
//
//   - "echo": returns the payload;
//   - "sleep": sleeps for the payload's duration ("4ms", as time.ParseDuration reads it),
//     returns nothing: a call whose execution time is known and costs no CPU;
//   - "spin": computes a SHA-256 chain of the payload's decimal count of rounds and
//     returns the final hash in hex: a call that costs CPU;
//   - "whoami": returns "tenant/plugin/pid/calls", the worker's binding, process id and
//     how many calls it had answered before this one, so tests can see which process
//     served a call and whether it was reused;
//   - "fail": answers with a plugin error carrying the payload (the worker stays usable).
//
// A request for another tenant or plugin than the worker's own is answered with an error:
// a used worker never serves a second tenant, and this checks it in the process itself.
func Serve(in io.Reader, out io.Writer, getenv func(string) string) error {
	tenant, plugin := getenv(TenantEnv), getenv(PluginEnv)
	w := bufio.NewWriter(out)
	if _, err := w.Write(encodeReady(os.Getpid())); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	r := bufio.NewReader(in)
	for calls := 0; ; calls++ {
		body, err := readFrame(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		req, err := decodeRequest(body)
		if err != nil {
			return err
		}
		var resp []byte
		if req.tenant != tenant || req.plugin != plugin {
			resp = encodeResponse([]byte(fmt.Sprintf("worker of %s/%s got a call of %s/%s", tenant, plugin, req.tenant, req.plugin)), true)
		} else if res, err := operate(req, calls); err != nil {
			resp = encodeResponse([]byte(err.Error()), true)
		} else {
			resp = encodeResponse(res, false)
		}
		if _, err := w.Write(resp); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// operate runs one operation of the plugin; calls is how many the worker answered before.
func operate(req request, calls int) ([]byte, error) {
	switch req.op {
	case "echo":
		return req.payload, nil
	case "sleep":
		d, err := time.ParseDuration(string(req.payload))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("sleep: payload %q is not a duration", req.payload)
		}
		time.Sleep(d)
		return nil, nil
	case "spin":
		n, err := strconv.Atoi(string(req.payload))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("spin: payload %q is not a round count", req.payload)
		}
		sum := sha256.Sum256(req.payload)
		for range n {
			sum = sha256.Sum256(sum[:])
		}
		return []byte(hex.EncodeToString(sum[:])), nil
	case "whoami":
		return fmt.Appendf(nil, "%s/%s/%d/%d", req.tenant, req.plugin, os.Getpid(), calls), nil
	case "fail":
		return nil, errors.New(string(req.payload))
	}
	return nil, fmt.Errorf("unknown operation %q", req.op)
}
