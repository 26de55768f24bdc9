package pluginhost

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// This file is the wire format between the host and a worker process: length-prefixed
// frames on the worker's stdin (requests) and stdout (the ready frame, then responses).
//
//	frame    = length:uint32be body                 (length counts body's bytes)
//	request  = kind:0x01 tenant:str16 plugin:str16 op:str16 payload:rest
//	response = kind:0x02 status:uint8 body:rest     (status 0: body is the output; 1: an error message)
//	ready    = kind:0x03 pid:uint32be               (sent once, when the worker can take calls)
//	bind     = kind:0x04 tenant:str16 plugin:str16  (host to a pristine or released worker: serve this pair)
//	release  = kind:0x05                            (host: clean up the session and unbind)
//	callback = kind:0x06 name:str16 payload:rest    (worker to host, during a call)
//	cbreply  = kind:0x07 status:uint8 body:rest     (host's answer to a callback)
//	str16    = length:uint16be bytes
//
// bind and release are answered with a response frame (status 0 and an empty body on
// success). A worker started without a tenant and plugin (a pristine worker) takes no call
// before it is bound; a released worker is unbound again.

const (
	kindRequest  = 0x01
	kindResponse = 0x02
	kindReady    = 0x03
	kindBind     = 0x04
	kindRelease  = 0x05
	kindCallback = 0x06
	kindCbReply  = 0x07

	statusOK    = 0
	statusError = 1

	// maxFrame bounds a frame a reader accepts, so a corrupt length cannot make it
	// allocate gigabytes: the largest call the scheduler admits is MaxCallBytes, whose
	// upper limit is this.
	maxFrame = 64 << 20
)

// request is one call as it crosses the wire.
type request struct {
	tenant, plugin, op string
	payload            []byte
}

// requestSize returns the serialized size of a request: the bytes the scheduler's
// MaxCallBytes bounds.
func requestSize(tenant, plugin, op string, payload []byte) int {
	return 4 + 1 + 3*2 + len(tenant) + len(plugin) + len(op) + len(payload)
}

// encodeRequest returns the request as one frame.
func encodeRequest(r request) ([]byte, error) {
	for _, s := range []string{r.tenant, r.plugin, r.op} {
		if len(s) > 0xffff {
			return nil, fmt.Errorf("wire: a name of %d bytes is longer than 65535", len(s))
		}
	}
	size := requestSize(r.tenant, r.plugin, r.op, r.payload)
	buf := make([]byte, 0, size)
	buf = binary.BigEndian.AppendUint32(buf, uint32(size-4))
	buf = append(buf, kindRequest)
	for _, s := range []string{r.tenant, r.plugin, r.op} {
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(s)))
		buf = append(buf, s...)
	}
	return append(buf, r.payload...), nil
}

// decodeRequest parses a request frame's body.
func decodeRequest(body []byte) (request, error) {
	if len(body) < 1 || body[0] != kindRequest {
		return request{}, errors.New("wire: not a request frame")
	}
	rest := body[1:]
	var names [3]string
	for i := range names {
		if len(rest) < 2 {
			return request{}, errors.New("wire: request frame truncated")
		}
		n := int(binary.BigEndian.Uint16(rest))
		rest = rest[2:]
		if len(rest) < n {
			return request{}, errors.New("wire: request frame truncated")
		}
		names[i], rest = string(rest[:n]), rest[n:]
	}
	return request{tenant: names[0], plugin: names[1], op: names[2], payload: rest}, nil
}

// encodeResponse returns a response frame: the output, or an error message when failed.
func encodeResponse(out []byte, failed bool) []byte {
	status := byte(statusOK)
	if failed {
		status = statusError
	}
	buf := make([]byte, 0, 4+2+len(out))
	buf = binary.BigEndian.AppendUint32(buf, uint32(2+len(out)))
	buf = append(buf, kindResponse, status)
	return append(buf, out...)
}

// decodeResponse parses a response frame's body into the output or the worker's error.
func decodeResponse(body []byte) ([]byte, error) {
	if len(body) < 2 || body[0] != kindResponse {
		return nil, errors.New("wire: not a response frame")
	}
	switch body[1] {
	case statusOK:
		return body[2:], nil
	case statusError:
		return nil, &PluginError{Message: string(body[2:])}
	}
	return nil, fmt.Errorf("wire: unknown response status %d", body[1])
}

// encodeReady returns the ready frame of a worker with the given process id.
func encodeReady(pid int) []byte {
	buf := binary.BigEndian.AppendUint32(nil, 5)
	buf = append(buf, kindReady)
	return binary.BigEndian.AppendUint32(buf, uint32(pid))
}

// decodeReady parses a ready frame's body and returns the worker's process id.
func decodeReady(body []byte) (int, error) {
	if len(body) != 5 || body[0] != kindReady {
		return 0, errors.New("wire: not a ready frame")
	}
	return int(binary.BigEndian.Uint32(body[1:])), nil
}

// appendStr16 appends a length-prefixed string.
func appendStr16(buf []byte, s string) ([]byte, error) {
	if len(s) > 0xffff {
		return nil, fmt.Errorf("wire: a name of %d bytes is longer than 65535", len(s))
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(s)))
	return append(buf, s...), nil
}

// readStr16 reads a length-prefixed string from the front of b.
func readStr16(b []byte) (string, []byte, error) {
	if len(b) < 2 {
		return "", nil, errors.New("wire: frame truncated")
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if len(b) < n {
		return "", nil, errors.New("wire: frame truncated")
	}
	return string(b[:n]), b[n:], nil
}

// frame prefixes body with its length.
func frame(body []byte) []byte {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(len(body)))
	return append(out, body...)
}

// encodeBind returns a bind frame for tenant/plugin.
func encodeBind(tenant, plugin string) ([]byte, error) {
	body := []byte{kindBind}
	var err error
	if body, err = appendStr16(body, tenant); err != nil {
		return nil, err
	}
	if body, err = appendStr16(body, plugin); err != nil {
		return nil, err
	}
	return frame(body), nil
}

// decodeBind parses a bind frame's body.
func decodeBind(body []byte) (tenant, plugin string, err error) {
	if len(body) < 1 || body[0] != kindBind {
		return "", "", errors.New("wire: not a bind frame")
	}
	tenant, rest, err := readStr16(body[1:])
	if err != nil {
		return "", "", err
	}
	plugin, rest, err = readStr16(rest)
	if err != nil {
		return "", "", err
	}
	if len(rest) != 0 {
		return "", "", errors.New("wire: bind frame has trailing bytes")
	}
	return tenant, plugin, nil
}

// encodeRelease returns a release frame.
func encodeRelease() []byte { return frame([]byte{kindRelease}) }

// encodeCallback returns a callback frame.
func encodeCallback(name string, payload []byte) ([]byte, error) {
	body, err := appendStr16([]byte{kindCallback}, name)
	if err != nil {
		return nil, err
	}
	return frame(append(body, payload...)), nil
}

// decodeCallback parses a callback frame's body.
func decodeCallback(body []byte) (name string, payload []byte, err error) {
	if len(body) < 1 || body[0] != kindCallback {
		return "", nil, errors.New("wire: not a callback frame")
	}
	name, rest, err := readStr16(body[1:])
	return name, rest, err
}

// encodeCbReply returns the host's answer to a callback: the output, or an error message.
func encodeCbReply(out []byte, failed bool) []byte {
	status := byte(statusOK)
	if failed {
		status = statusError
	}
	return frame(append([]byte{kindCbReply, status}, out...))
}

// decodeCbReply parses a callback answer into the output or the host's error.
func decodeCbReply(body []byte) ([]byte, error) {
	if len(body) < 2 || body[0] != kindCbReply {
		return nil, errors.New("wire: not a callback reply frame")
	}
	switch body[1] {
	case statusOK:
		return body[2:], nil
	case statusError:
		return nil, errors.New(string(body[2:]))
	}
	return nil, fmt.Errorf("wire: unknown callback reply status %d", body[1])
}

// readFrame reads one frame and returns its body.
func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("wire: frame of %d bytes exceeds the %d-byte limit", n, maxFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// PluginError is a failure the plugin itself reported for one call: the worker answered,
// so it is still usable, unlike a transport failure.
type PluginError struct {
	Message string
}

// Error returns the plugin's message.
func (e *PluginError) Error() string { return "plugin: " + e.Message }
