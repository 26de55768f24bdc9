package readerpool

import (
	"bytes"
	"container/list"
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync/atomic"

	"zombiezen.com/go/sqlite"
)

// reclaimFloor is the JSON buffer capacity a worker keeps however small its reads are;
// above it, a read that fills less than a quarter of the buffer shrinks it.
const reclaimFloor = 16 << 10

// Approximate Go memory per row and per value of a Select result, on top of the payload
// (text and blob bytes), used to compare a result with the sacrifice threshold.
const (
	rowOverhead   = 24 // slice header
	valueOverhead = 16 // interface value
)

// job is one read sent to a worker.
type job struct {
	ctx  context.Context
	sql  string
	args []any
	// json asks for the rows rendered as JSON (SelectBytes) instead of as Rows.
	json bool
	// memory is what the row memory knew about sql at dispatch (zero when unseen).
	memory rowEntry
	// reply receives the result; it has room for one value so the worker never blocks.
	reply chan result
}

// result is a worker's answer to a job.
type result struct {
	rows []Row
	json []byte // a copy the caller owns
	n    int    // rows returned
	err  error
}

// prepared is one entry of a worker's statement cache: the warm state a read of the
// same SQL on the same worker reuses.
type prepared struct {
	sql  string
	stmt *sqlite.Stmt
	// keys are the statement's column names rendered as JSON object keys, built by the
	// first SelectBytes of the statement on this worker.
	keys [][]byte
}

// workerCounters are a worker's statistics, written by its goroutine and read by Stats.
type workerCounters struct {
	reads, jsonReads, prepares, sacrifices atomic.Uint64
	bufferCap, cached                      atomic.Int64
	// cpuNanos is the CPU time spent serving reads (WithWorkerCPU).
	cpuNanos atomic.Int64
}

// worker owns one read-only connection and everything warm on it: the connection's page
// cache, its prepared statements (cached by SQL text, least recently used evicted past
// the cache size) and the JSON buffer SelectBytes renders into. Only the worker's own
// goroutine touches these.
type worker struct {
	slot int
	path string
	disp *dispatcher
	cfg  config
	jobs chan *job

	conn  *sqlite.Conn
	cache map[string]*list.Element // SQL text -> element holding *prepared
	lru   *list.List               // most recently used first
	buf   []byte                   // JSON buffer, reused across SelectBytes reads

	counters workerCounters
	// closeErr is the error of the final connection close, read after the goroutine ends.
	closeErr error
}

// newWorker opens the worker's connection.
func newWorker(slot int, path string, d *dispatcher, cfg config) (*worker, error) {
	w := &worker{
		slot:  slot,
		path:  path,
		disp:  d,
		cfg:   cfg,
		jobs:  make(chan *job),
		cache: make(map[string]*list.Element),
		lru:   list.New(),
	}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

// open opens the worker's read-only connection.
func (w *worker) open() error {
	conn, err := sqlite.OpenConn(w.path, sqlite.OpenReadOnly, sqlite.OpenURI)
	if err != nil {
		return fmt.Errorf("opening reader %d: %w", w.slot, err)
	}
	w.conn = conn
	return nil
}

// drop closes the connection and forgets every piece of warm state with it.
func (w *worker) drop() error {
	var err error
	if w.conn != nil {
		err = w.conn.Close() // finalizes the cached statements too
		w.conn = nil
	}
	clear(w.cache)
	w.lru.Init()
	w.buf = nil
	w.counters.cached.Store(0)
	w.counters.bufferCap.Store(0)
	return err
}

// loop serves jobs until the jobs channel is closed, then closes the connection.
//
// The slot is released before the reply is sent, so a caller that reads again as soon as
// its read returns finds the worker free (this is what makes sequential reads land on
// one worker deterministically under sticky dispatch). A read whose result is larger than
// the sacrifice threshold makes the worker drop its connection, with all the memory it
// holds, before replying; the worker reopens after replying and only then becomes free
// again, so the caller does not wait for the reopen but the next reads skip this worker
// until it is back.
func (w *worker) loop() {
	for j := range w.jobs {
		// Handing a job to a waiting worker makes the worker the next goroutine to run on
		// the caller's processor, ahead of any other caller queued there. Yielding once
		// lets those callers reach the dispatcher before this read takes the processor,
		// so concurrent callers ask for workers together, as they do in the original
		// library, whose callers and readers are separate threads; without it, on a
		// 2-core host the last of four concurrent callers often arrived after the first
		// read was done.
		runtime.Gosched()
		r, size := w.timedServe(j)
		if w.cfg.sacrificeBytes > 0 && size > w.cfg.sacrificeBytes {
			w.counters.sacrifices.Add(1)
			_ = w.drop() // the connection is discarded; a close error changes nothing
			j.reply <- r
			_ = w.open() // on failure conn stays nil and the next read retries and reports
			w.disp.release(w.slot)
			continue
		}
		w.disp.release(w.slot)
		j.reply <- r
	}
	w.closeErr = w.drop()
}

// timedServe is serve, measuring the CPU time of the worker's thread with WithWorkerCPU:
// the goroutine is locked to its thread for the read, so the thread's clock counts this
// read and nothing else.
func (w *worker) timedServe(j *job) (result, int64) {
	if !w.cfg.workerCPU {
		return w.serve(j)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := threadCPU()
	r, size := w.serve(j)
	if end, ok2 := threadCPU(); ok && ok2 {
		w.counters.cpuNanos.Add(int64(end - start))
	}
	return r, size
}

// serve runs one read and returns its result and its approximate size in bytes.
func (w *worker) serve(j *job) (result, int64) {
	if w.conn == nil {
		if err := w.open(); err != nil {
			return result{err: err}, 0
		}
	}
	if done := j.ctx.Done(); done != nil {
		w.conn.SetInterrupt(done)
		defer w.conn.SetInterrupt(nil)
	}
	p, err := w.prepare(j.sql)
	if err != nil {
		return result{err: err}, 0
	}
	defer p.stmt.Reset()
	if err := bindArgs(p.stmt, j.args); err != nil {
		return result{err: err}, 0
	}
	if j.json {
		w.counters.jsonReads.Add(1)
		return w.readJSON(p, j.memory)
	}
	w.counters.reads.Add(1)
	return readRows(p.stmt, j.memory)
}

// prepare returns the cached statement for sql, preparing it on a miss.
func (w *worker) prepare(sql string) (*prepared, error) {
	if e, ok := w.cache[sql]; ok {
		w.lru.MoveToFront(e)
		return e.Value.(*prepared), nil
	}
	stmt, err := w.conn.Prepare(sql)
	if err != nil {
		return nil, err
	}
	w.counters.prepares.Add(1)
	p := &prepared{sql: sql, stmt: stmt}
	w.cache[sql] = w.lru.PushFront(p)
	if w.lru.Len() > w.cfg.statementCache {
		old := w.lru.Remove(w.lru.Back()).(*prepared)
		delete(w.cache, old.sql)
		_ = old.stmt.Finalize() // also removes it from the connection's own cache
	}
	w.counters.cached.Store(int64(w.lru.Len()))
	return p, nil
}

// readRows steps stmt to the end and returns its rows.
func readRows(stmt *sqlite.Stmt, memory rowEntry) (result, int64) {
	rows := make([]Row, 0, min(memory.highWater, 1024))
	var size int64
	for {
		ok, err := stmt.Step()
		if err != nil {
			return result{err: err}, 0
		}
		if !ok {
			break
		}
		n := stmt.ColumnCount()
		row := make(Row, n)
		size += rowOverhead + int64(n)*valueOverhead
		for c := range n {
			switch stmt.ColumnType(c) {
			case sqlite.TypeInteger:
				row[c] = stmt.ColumnInt64(c)
			case sqlite.TypeFloat:
				row[c] = stmt.ColumnFloat(c)
			case sqlite.TypeText:
				s := stmt.ColumnText(c)
				row[c] = s
				size += int64(len(s))
			case sqlite.TypeBlob:
				b := make([]byte, stmt.ColumnLen(c))
				stmt.ColumnBytes(c, b)
				row[c] = b
				size += int64(len(b))
			default:
				row[c] = nil
			}
		}
		rows = append(rows, row)
	}
	return result{rows: rows, n: len(rows)}, size
}

// readJSON steps the statement to the end, rendering the rows into the worker's JSON
// buffer, and returns a copy of the rendering.
func (w *worker) readJSON(p *prepared, memory rowEntry) (result, int64) {
	stmt := p.stmt
	if n := stmt.ColumnCount(); len(p.keys) != n {
		names := make([]string, n)
		for c := range names {
			names[c] = stmt.ColumnName(c)
		}
		p.keys = jsonKeys(names)
	}
	if w.buf == nil {
		// A fresh buffer (first read, or after a reclaim or a sacrifice) is sized from
		// the row memory, within the floor and the sacrifice threshold.
		hint := int64(memory.highWater) * int64(memory.rowJSONSize)
		if w.cfg.sacrificeBytes > 0 {
			hint = min(hint, w.cfg.sacrificeBytes)
		}
		w.buf = make([]byte, 0, max(reclaimFloor, hint))
	}
	buf := append(w.buf[:0], '[')
	n := 0
	for {
		ok, err := stmt.Step()
		if err != nil {
			w.buf = buf[:0]
			w.counters.bufferCap.Store(int64(cap(w.buf)))
			return result{err: err}, 0
		}
		if !ok {
			break
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '{')
		for c, key := range p.keys {
			if c > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, key...)
			switch stmt.ColumnType(c) {
			case sqlite.TypeInteger:
				buf = strconv.AppendInt(buf, stmt.ColumnInt64(c), 10)
			case sqlite.TypeFloat:
				buf = appendJSONFloat(buf, stmt.ColumnFloat(c))
			case sqlite.TypeText:
				buf = appendJSONString(buf, stmt.ColumnText(c))
			case sqlite.TypeBlob:
				b := make([]byte, stmt.ColumnLen(c))
				stmt.ColumnBytes(c, b)
				buf = appendJSONBlob(buf, b)
			default:
				buf = append(buf, "null"...)
			}
		}
		buf = append(buf, '}')
		n++
	}
	buf = append(buf, ']')
	out := bytes.Clone(buf)
	w.buf = buf[:0]
	w.reclaim(len(out))
	return result{json: out, n: n}, int64(len(out))
}

// reclaim shrinks the JSON buffer when the read that just used it needed less than a
// quarter of it, so one large result does not pin its memory on the worker for good.
func (w *worker) reclaim(used int) {
	if c := cap(w.buf); c > reclaimFloor && used < c/4 {
		w.buf = make([]byte, 0, max(reclaimFloor, 2*used))
	}
	w.counters.bufferCap.Store(int64(cap(w.buf)))
}

// bindArgs binds args to stmt's parameters by position. The count must match, and each
// value must be nil, a bool, an integer, a float, a string or a []byte.
func bindArgs(stmt *sqlite.Stmt, args []any) error {
	if want := stmt.BindParamCount(); len(args) != want {
		return fmt.Errorf("statement takes %d arguments, got %d", want, len(args))
	}
	for k, a := range args {
		i := k + 1
		switch v := a.(type) {
		case nil:
			stmt.BindNull(i)
		case bool:
			stmt.BindBool(i, v)
		case int:
			stmt.BindInt64(i, int64(v))
		case int8:
			stmt.BindInt64(i, int64(v))
		case int16:
			stmt.BindInt64(i, int64(v))
		case int32:
			stmt.BindInt64(i, int64(v))
		case int64:
			stmt.BindInt64(i, v)
		case uint8:
			stmt.BindInt64(i, int64(v))
		case uint16:
			stmt.BindInt64(i, int64(v))
		case uint32:
			stmt.BindInt64(i, int64(v))
		case uint:
			if uint64(v) > math.MaxInt64 {
				return fmt.Errorf("argument %d: %d overflows an SQLite integer", i, v)
			}
			stmt.BindInt64(i, int64(v))
		case uint64:
			if v > math.MaxInt64 {
				return fmt.Errorf("argument %d: %d overflows an SQLite integer", i, v)
			}
			stmt.BindInt64(i, int64(v))
		case float32:
			stmt.BindFloat(i, float64(v))
		case float64:
			stmt.BindFloat(i, v)
		case string:
			stmt.BindText(i, v)
		case []byte:
			stmt.BindBytes(i, v)
		default:
			return fmt.Errorf("argument %d: unsupported type %T", i, a)
		}
	}
	return nil
}
