package pluginhost

import (
	"bufio"
	"bytes"
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
// out, then answers frames read from in, one at a time, until in reaches its end (the
// host closed the pipe or died), which ends it with a nil error. getenv supplies the
// worker's environment: the tenant and plugin it is bound to, or neither for a pristine
// worker, which takes a bind frame before its first call.
//
// The plugin's operations are workloads whose cost the caller chooses:
//
//   - "echo": returns the payload;
//   - "sleep": sleeps for the payload's duration ("4ms", as time.ParseDuration reads it),
//     returns nothing: a call whose execution time is known and costs no CPU;
//   - "spin": computes a SHA-256 chain of the payload's decimal count of rounds and
//     returns the final hash in hex: a call that costs CPU;
//   - "whoami": returns "tenant/plugin/pid/calls", the worker's binding, process id and
//     how many calls it had answered in this session before this one, so tests can see
//     which process served a call and whether it was reused;
//   - "fail": answers with a plugin error carrying the payload (the worker stays usable);
//   - "callback": the payload is "name:argument"; the worker asks the host to run the
//     application callback name with the argument (a callback frame) and returns the
//     host's answer, or fails with the host's refusal;
//   - "crash": the worker process exits at once with status 3, without answering: a
//     plugin that dies mid-call, for the fault-recovery tests;
//   - "taint": marks the session as holding state its cleanup cannot remove, so the next
//     release fails: the cleanup failure tests and the fault lanes use it.
//
// A request for another tenant or plugin than the worker's binding is answered with an
// error: a used worker never serves a second tenant unless the host released it (a
// release frame: the session's state is cleaned up and the binding dropped, as approved
// session reuse does), and this checks it in the process itself.
func Serve(in io.Reader, out io.Writer, getenv func(string) string) error {
	tenant, plugin := getenv(TenantEnv), getenv(PluginEnv)
	w := bufio.NewWriter(out)
	send := func(b []byte) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := send(encodeReady(os.Getpid())); err != nil {
		return err
	}
	r := bufio.NewReader(in)
	calls, tainted := 0, false
	for {
		body, err := readFrame(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(body) == 0 {
			return errors.New("wire: empty frame")
		}
		var resp []byte
		switch body[0] {
		case kindBind:
			t, p, err := decodeBind(body)
			switch {
			case err != nil:
				return err
			case tenant != "":
				resp = encodeResponse(fmt.Appendf(nil, "worker of %s/%s asked to bind to %s/%s", tenant, plugin, t, p), true)
			default:
				tenant, plugin = t, p
				resp = encodeResponse(nil, false)
			}
		case kindRelease:
			if tainted {
				resp = encodeResponse(fmt.Appendf(nil, "session of %s/%s holds state its cleanup cannot remove", tenant, plugin), true)
				break
			}
			tenant, plugin, calls = "", "", 0
			resp = encodeResponse(nil, false)
		case kindRequest:
			req, err := decodeRequest(body)
			if err != nil {
				return err
			}
			switch {
			case tenant == "":
				resp = encodeResponse(fmt.Appendf(nil, "unbound worker got a call of %s/%s", req.tenant, req.plugin), true)
			case req.tenant != tenant || req.plugin != plugin:
				resp = encodeResponse(fmt.Appendf(nil, "worker of %s/%s got a call of %s/%s", tenant, plugin, req.tenant, req.plugin), true)
			case req.op == "crash":
				os.Exit(3)
			case req.op == "taint":
				tainted = true
				resp = encodeResponse(nil, false)
			case req.op == "callback":
				res, err := callHost(r, send, req.payload)
				if err != nil {
					resp = encodeResponse([]byte(err.Error()), true)
				} else {
					resp = encodeResponse(res, false)
				}
			default:
				if res, err := operate(req, calls); err != nil {
					resp = encodeResponse([]byte(err.Error()), true)
				} else {
					resp = encodeResponse(res, false)
				}
			}
			calls++
		default:
			return fmt.Errorf("wire: unexpected frame kind %#x", body[0])
		}
		if err := send(resp); err != nil {
			return err
		}
	}
}

// callHost sends a callback frame for payload "name:argument" and reads the host's
// answer.
func callHost(r io.Reader, send func([]byte) error, payload []byte) ([]byte, error) {
	name, arg, ok := bytes.Cut(payload, []byte(":"))
	if !ok {
		return nil, fmt.Errorf("callback: payload %q is not name:argument", payload)
	}
	f, err := encodeCallback(string(name), arg)
	if err != nil {
		return nil, err
	}
	if err := send(f); err != nil {
		return nil, err
	}
	body, err := readFrame(r)
	if err != nil {
		return nil, err
	}
	return decodeCbReply(body)
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
