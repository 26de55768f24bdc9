package readerpool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"zombiezen.com/go/sqlite"
)

// ErrClosed is returned (possibly wrapped) by every call made on a closed pool, and by
// reads that were parked when the pool was closed.
var ErrClosed = errors.New("reader pool closed")

// DefaultSacrificeBytes is the result size above which a worker drops and reopens its
// connection after answering.
const DefaultSacrificeBytes int64 = 4 << 20

// DefaultStatementCache is how many prepared statements a worker keeps.
const DefaultStatementCache = 256

// DefaultWorkers returns the default number of reader workers: one fewer than the
// machine's CPUs, but at least 2 and at most 4.
func DefaultWorkers() int {
	return min(max(runtime.NumCPU()-1, 2), 4)
}

// Row is one result row: one value per column, in column order. A value is an int64, a
// float64, a string, a []byte (for a blob) or nil (for NULL).
type Row []any

// config is the pool's configuration, set by Options.
type config struct {
	workers        int
	sacrificeBytes int64
	statementCache int
	stickyBytes    bool
	workerCPU      bool
}

// An Option configures Open.
type Option func(*config)

// WithWorkers sets the number of reader workers (at least 1). The default is
// DefaultWorkers().
func WithWorkers(n int) Option {
	return func(c *config) { c.workers = n }
}

// WithSacrificeBytes sets the result size, in bytes, above which a worker drops and
// reopens its connection to release the memory the read left behind. For SelectBytes the
// size is the JSON length; for Select it is an estimate of the rows' Go memory (payload
// plus per-row and per-value overhead). Zero disables sacrifice. The default is
// DefaultSacrificeBytes.
func WithSacrificeBytes(n int64) Option {
	return func(c *config) { c.sacrificeBytes = n }
}

// WithStatementCache sets how many prepared statements each worker keeps (at least 1);
// past that, the least recently used one is finalized. The default is
// DefaultStatementCache.
func WithStatementCache(n int) Option {
	return func(c *config) { c.statementCache = n }
}

// WithStickyBytes makes SelectBytes follow the sticky dispatch of Select instead of
// rotating. It is the variant exp 266 rejected and exists to show why: after a burst of
// concurrent large byte reads has grown every worker's JSON buffer, sticky small reads
// all return to one worker and the other buffers are never reclaimed (see
// Pool.SelectBytes). The release suite's diagnostics guard (lanes/release) fails with it.
// Do not use it otherwise.
func WithStickyBytes() Option {
	return func(c *config) { c.stickyBytes = true }
}

// WithWorkerCPU makes every worker measure the CPU time its thread spends serving reads
// (WorkerStats.CPU): for the duration of each read the worker's goroutine is locked to
// its thread, whose CPU clock is read before and after. Locking keeps the goroutine on
// one thread, so the clock measures this read alone, and gives each busy worker a thread
// of its own, as the reader isolates of the original library have. It costs two clock
// reads per read; lanes use it to show how many cores the workers of a burst really got.
// Off Linux, or where the clock cannot be read, CPU stays 0.
func WithWorkerCPU() Option {
	return func(c *config) { c.workerCPU = true }
}

// Pool is a SQLite database served by one writer connection and a fixed set of reader
// workers. It is safe for concurrent use.
type Pool struct {
	disp    *dispatcher
	workers []*worker
	memory  *rowMemory
	// stickyBytes is WithStickyBytes: SelectBytes does not rotate.
	stickyBytes bool
	// running counts worker goroutines.
	running sync.WaitGroup

	wmu    sync.Mutex
	writer *sqlite.Conn // nil once the pool is closed
}

// Open opens (creating if needed) the database file at path, switches it to WAL mode so
// readers do not block the writer, and starts the reader workers. path is a file name or
// a "file:" URI; an in-memory database cannot be shared by the connections and is not
// supported.
func Open(path string, opts ...Option) (*Pool, error) {
	cfg := config{
		workers:        DefaultWorkers(),
		sacrificeBytes: DefaultSacrificeBytes,
		statementCache: DefaultStatementCache,
	}
	for _, o := range opts {
		o(&cfg)
	}
	switch {
	case cfg.workers < 1:
		return nil, fmt.Errorf("opening reader pool: workers must be at least 1, got %d", cfg.workers)
	case cfg.sacrificeBytes < 0:
		return nil, fmt.Errorf("opening reader pool: sacrifice bytes must not be negative, got %d", cfg.sacrificeBytes)
	case cfg.statementCache < 1:
		return nil, fmt.Errorf("opening reader pool: statement cache must hold at least 1 statement, got %d", cfg.statementCache)
	}
	writer, err := sqlite.OpenConn(path, sqlite.OpenReadWrite, sqlite.OpenCreate, sqlite.OpenWAL, sqlite.OpenURI)
	if err != nil {
		return nil, fmt.Errorf("opening reader pool writer: %w", err)
	}
	p := &Pool{
		disp:        newDispatcher(cfg.workers),
		memory:      newRowMemory(),
		stickyBytes: cfg.stickyBytes,
		writer:      writer,
	}
	for slot := range cfg.workers {
		w, err := newWorker(slot, path, p.disp, cfg)
		if err != nil {
			for _, opened := range p.workers {
				_ = opened.drop()
			}
			_ = writer.Close()
			return nil, fmt.Errorf("opening reader pool: %w", err)
		}
		p.workers = append(p.workers, w)
	}
	p.running.Add(len(p.workers))
	for _, w := range p.workers {
		go func() {
			defer p.running.Done()
			w.loop()
		}()
	}
	return p, nil
}

// Close stops the pool. Reads that are parked waiting for a worker fail with ErrClosed;
// reads already running on a worker finish first. Then every connection is closed.
// Closing a closed pool does nothing and returns nil.
func (p *Pool) Close() error {
	if !p.disp.close() {
		return nil
	}
	for _, w := range p.workers {
		close(w.jobs)
	}
	p.running.Wait()
	var errs []error
	for _, w := range p.workers {
		if w.closeErr != nil {
			errs = append(errs, fmt.Errorf("closing reader %d: %w", w.slot, w.closeErr))
		}
	}
	p.wmu.Lock()
	if err := p.writer.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing writer: %w", err))
	}
	p.writer = nil
	p.wmu.Unlock()
	return errors.Join(errs...)
}

// Exec runs sql on the writer connection. With arguments, sql is one statement whose
// parameters take args by position (see Select for the accepted types), and it stays
// prepared on the writer for the next call. Without arguments, sql may be a script of
// several statements, run one after another and not wrapped in a transaction. Rows the
// statements return are discarded. Ending ctx interrupts the statement.
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) error {
	if err := p.exec(ctx, sql, args); err != nil {
		return fmt.Errorf("exec %s: %w", quoteSQL(sql), err)
	}
	return nil
}

// exec is Exec without the error context.
func (p *Pool) exec(ctx context.Context, sql string, args []any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.writer == nil {
		return ErrClosed
	}
	if done := ctx.Done(); done != nil {
		p.writer.SetInterrupt(done)
		defer p.writer.SetInterrupt(nil)
	}
	err := execOn(p.writer, sql, args)
	if err != nil && ctx.Err() != nil && sqlite.ErrCode(err) == sqlite.ResultInterrupt {
		return ctx.Err()
	}
	return err
}

// execOn runs sql on conn as Exec documents.
func execOn(conn *sqlite.Conn, sql string, args []any) error {
	if len(args) > 0 {
		stmt, err := conn.Prepare(sql)
		if err != nil {
			return err
		}
		defer stmt.Reset()
		if err := bindArgs(stmt, args); err != nil {
			return err
		}
		return stepAll(stmt)
	}
	for rest := skipNoise(sql); rest != ""; {
		stmt, trailing, err := conn.PrepareTransient(rest)
		if err != nil {
			return err
		}
		err = stepAll(stmt)
		if ferr := stmt.Finalize(); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
		rest = skipNoise(rest[len(rest)-trailing:])
	}
	return nil
}

// skipNoise strips the whitespace, comments and empty statements (lone semicolons) that
// start sql. SQLite prepares such text to no statement at all, which cannot be stepped.
func skipNoise(sql string) string {
	for {
		sql = strings.TrimLeft(sql, " \t\r\n\f;")
		switch {
		case strings.HasPrefix(sql, "--"):
			end := strings.IndexByte(sql, '\n')
			if end < 0 {
				return ""
			}
			sql = sql[end+1:]
		case strings.HasPrefix(sql, "/*"):
			end := strings.Index(sql[2:], "*/")
			if end < 0 {
				return "" // SQLite treats an unterminated comment as running to the end
			}
			sql = sql[2+end+2:]
		default:
			return sql
		}
	}
}

// stepAll steps stmt until it is done, discarding rows.
func stepAll(stmt *sqlite.Stmt) error {
	for {
		more, err := stmt.Step()
		if err != nil || !more {
			return err
		}
	}
}

// Select runs the query sql on a reader worker and returns every row. Parameters take
// args by position; each must be nil, a bool, an integer, a float, a string or a []byte,
// and their number must match the statement's. A read waits (parks) when every worker is
// busy, and is handed the next freed worker in arrival order. Ending ctx while the read
// is parked gives up the wait; ending it while the read runs interrupts the statement.
// Either way the error matches ctx.Err() with errors.Is.
//
// Which worker serves the read is sticky: the scan for a free worker starts at the one
// that served the previous read, so sequential reads of a statement reuse the worker
// that already prepared it, while concurrent reads still spread over every worker.
func (p *Pool) Select(ctx context.Context, sql string, args ...any) ([]Row, error) {
	r, err := p.read(ctx, sql, args, false)
	if err != nil {
		return nil, fmt.Errorf("select %s: %w", quoteSQL(sql), err)
	}
	return r.rows, nil
}

// SelectBytes runs the query like Select and returns the rows rendered as JSON: an array
// with one object per row, keyed by column name. Integers and floats are numbers (a NaN
// or an infinity is null), text is a string, a blob is a base64 string and NULL is null.
// The worker renders into a buffer it keeps across reads and returns a copy; when a
// later read needs much less than the buffer holds, the buffer is shrunk (reclaimed).
//
// SelectBytes does not follow the sticky dispatch of Select: the scan starts after the
// worker that served the previous read, so byte reads rotate over the workers. The reason
// is that buffer: it is reclaimed only when a later small read arrives on the same
// worker. A burst of concurrent large byte reads grows the buffer of every worker; if the
// small reads that follow were sticky they would all return to one worker and the other
// buffers would stay large indefinitely. Rotating visits every worker, so every buffer
// gets its chance to shrink. Rows reads keep no per-worker buffer, so they lose nothing
// by staying.
func (p *Pool) SelectBytes(ctx context.Context, sql string, args ...any) ([]byte, error) {
	r, err := p.read(ctx, sql, args, true)
	if err != nil {
		return nil, fmt.Errorf("select bytes %s: %w", quoteSQL(sql), err)
	}
	return r.json, nil
}

// read dispatches one read to a worker and waits for its result.
func (p *Pool) read(ctx context.Context, sql string, args []any, json bool) (result, error) {
	if err := ctx.Err(); err != nil {
		return result{}, err
	}
	memory, seen := p.memory.lookup(sql)
	slot, err := p.disp.acquire(ctx, claim{sql: sql, rotate: json && !p.stickyBytes, cheap: cheapRead(memory, seen)})
	if err != nil {
		return result{}, err
	}
	j := &job{ctx: ctx, sql: sql, args: args, json: json, memory: memory, reply: make(chan result, 1)}
	p.workers[slot].jobs <- j
	r := <-j.reply
	if r.err != nil {
		if ctx.Err() != nil && sqlite.ErrCode(r.err) == sqlite.ResultInterrupt {
			return result{}, ctx.Err()
		}
		return result{}, r.err
	}
	p.memory.record(sql, r.n, len(r.json))
	return r, nil
}

// RowMemory reports the most rows a successful read of sql (exact text) has returned,
// and whether sql has completed a read at all. The memory is bounded: the oldest of
// more than 4096 remembered statements is forgotten.
func (p *Pool) RowMemory(sql string) (highWater int, seen bool) {
	e, ok := p.memory.lookup(sql)
	return e.highWater, ok
}

// Stats is a snapshot of the pool's counters.
type Stats struct {
	// Workers has one entry per reader worker, by slot.
	Workers []WorkerStats
	// Dispatches counts reads that were given a worker.
	Dispatches uint64
	// Parked counts reads that found every worker busy and waited.
	Parked uint64
	// Reserved counts reads that parked while a worker was free, because the dispatch
	// policy kept that worker back for another read. The committed policy never does,
	// so it is 0; exp 275's candB (a costly read is refused the last free worker while
	// cheap reads are recent) counts each refusal here.
	Reserved uint64
	// Waiting is the number of reads parked right now.
	Waiting int
	// Free is the number of workers free right now.
	Free int
}

// WorkerStats are one worker's counters.
type WorkerStats struct {
	// Reads counts Select reads the worker ran.
	Reads uint64
	// JSONReads counts SelectBytes reads the worker ran.
	JSONReads uint64
	// Prepares counts statements the worker prepared (statement cache misses).
	Prepares uint64
	// Sacrifices counts the times the worker dropped its connection after a large result.
	Sacrifices uint64
	// CachedStatements is the number of statements prepared on the worker right now.
	CachedStatements int
	// BufferCap is the capacity of the worker's JSON buffer right now.
	BufferCap int
	// CPU is the CPU time the worker's thread spent serving reads, with WithWorkerCPU;
	// otherwise 0.
	CPU time.Duration
}

// Stats returns a snapshot of the pool's counters. It is cheap enough to call between
// reads in tests and benchmarks.
func (p *Pool) Stats() Stats {
	d := p.disp.stats()
	s := Stats{Dispatches: d.dispatches, Parked: d.parked, Reserved: d.reserved, Waiting: d.waiting, Free: d.free}
	for _, w := range p.workers {
		c := &w.counters
		s.Workers = append(s.Workers, WorkerStats{
			Reads:            c.reads.Load(),
			JSONReads:        c.jsonReads.Load(),
			Prepares:         c.prepares.Load(),
			Sacrifices:       c.sacrifices.Load(),
			CachedStatements: int(c.cached.Load()),
			BufferCap:        int(c.bufferCap.Load()),
			CPU:              time.Duration(c.cpuNanos.Load()),
		})
	}
	return s
}

// quoteSQL quotes sql for an error message, shortened to its first 60 characters.
func quoteSQL(sql string) string {
	const limit = 60
	if r := []rune(sql); len(r) > limit {
		return strconv.Quote(string(r[:limit])) + "..."
	}
	return strconv.Quote(sql)
}
