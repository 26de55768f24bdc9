package readerpool

import "sync"

// maxRowMemory bounds how many statements the row memory remembers; the oldest entry is
// forgotten first. A pool fed an unbounded stream of distinct SQL texts stays bounded.
const maxRowMemory = 4096

// rowMemory remembers, per SQL text, the most rows a read of it has ever returned (its
// high water) and the widest JSON row SelectBytes has produced for it. The pool reads it
// before dispatch and uses it to size result buffers; it is also the cost signal a
// cost-aware dispatch policy would classify reads with (exp 275: a statement is cheap
// once seen and never above 64 rows).
type rowMemory struct {
	mu      sync.Mutex
	entries map[string]rowEntry
	// order holds the remembered SQL texts, oldest first, for eviction.
	order []string
}

// rowEntry is what the row memory knows about one statement.
type rowEntry struct {
	highWater   int // most rows one read has returned
	rowJSONSize int // most JSON bytes per row one SelectBytes read has produced
}

// newRowMemory returns an empty row memory.
func newRowMemory() *rowMemory {
	return &rowMemory{entries: make(map[string]rowEntry)}
}

// lookup returns what is known about sql and whether it has completed a read before.
func (m *rowMemory) lookup(sql string) (rowEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[sql]
	return e, ok
}

// record notes a completed read of sql that returned rows rows and, for SelectBytes,
// jsonSize bytes (0 otherwise).
func (m *rowMemory) record(sql string, rows, jsonSize int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[sql]
	if !ok {
		if len(m.order) >= maxRowMemory {
			delete(m.entries, m.order[0])
			m.order[0] = ""
			m.order = m.order[1:]
		}
		m.order = append(m.order, sql)
	}
	e.highWater = max(e.highWater, rows)
	if rows > 0 {
		e.rowJSONSize = max(e.rowJSONSize, jsonSize/rows)
	}
	m.entries[sql] = e
}
