package pluginhost

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// These tests pin the admission order. Each builds a state with the fake launcher, frees
// one slot at a time and records which call the freed slot goes to, under both policies.
// Calls are written "tenant/plugin op".

// orderCase is one admission-order scenario.
type orderCase struct {
	name string
	// slots is the worker ceiling.
	slots int
	// history are calls that run and finish one after another before anything else,
	// so tenants have been served in that order.
	history []string
	// running are the calls that then hold slots; queued are the calls queued behind
	// them, in arrival order.
	running, queued []string
	// answer lists the calls to answer, one at a time; "*" is the call admitted last.
	// After each answer the newly admitted call is recorded.
	answer []string
	// want is the recorded admission order per policy.
	want map[Policy][]string
}

func TestAdmissionOrder(t *testing.T) {
	tests := []orderCase{
		{
			// A light tenant's call behind a noisy tenant's earlier calls: FIFO serves the
			// earlier calls; fair serves the tenant with fewer active workers (B none, A
			// one) as soon as a slot frees.
			name:    "light tenant behind a noisy one",
			slots:   2,
			running: []string{"A/p1 a1", "A/p2 a2"},
			queued:  []string{"A/p3 a3", "A/p4 a4", "B/p1 b1"},
			answer:  []string{"A/p1 a1", "A/p2 a2", "*"},
			want: map[Policy][]string{
				PolicyFIFO: {"A/p3 a3", "A/p4 a4", "B/p1 b1"},
				PolicyFair: {"B/p1 b1", "A/p3 a3", "A/p4 a4"},
			},
		},
		{
			// After a1: A 1, B 1, C 0 active, so C; after b1: A 1, B 0, C 1, so B; after
			// a2 only a3 is left.
			name:    "fewest active workers first",
			slots:   3,
			running: []string{"A/p1 a1", "A/p2 a2", "B/p1 b1"},
			queued:  []string{"A/p3 a3", "B/p2 b2", "C/p1 c1"},
			answer:  []string{"A/p1 a1", "B/p1 b1", "A/p2 a2"},
			want: map[Policy][]string{
				PolicyFIFO: {"A/p3 a3", "B/p2 b2", "C/p1 c1"},
				PolicyFair: {"C/p1 c1", "B/p2 b2", "A/p3 a3"},
			},
		},
		{
			// Equal active counts (none, once a0 finishes): the tenant served least
			// recently goes first. B was served before A, so B's call is admitted
			// although A's arrived first.
			name:    "least recently served breaks the tie",
			slots:   1,
			history: []string{"B/p1 b0"},
			running: []string{"A/p1 a0"},
			queued:  []string{"A/p2 a1", "B/p2 b1"},
			answer:  []string{"A/p1 a0", "*"},
			want: map[Policy][]string{
				PolicyFIFO: {"A/p2 a1", "B/p2 b1"},
				PolicyFair: {"B/p2 b1", "A/p2 a1"},
			},
		},
		{
			// Tenants never served rank before served ones; between two never served,
			// arrival order decides (C before B); then B, never served, before A.
			name:    "never served ranks first",
			slots:   1,
			running: []string{"A/p1 a0"},
			queued:  []string{"A/p2 a1", "C/p1 c1", "B/p1 b1"},
			answer:  []string{"A/p1 a0", "*", "*"},
			want: map[Policy][]string{
				PolicyFIFO: {"A/p2 a1", "C/p1 c1", "B/p1 b1"},
				PolicyFair: {"C/p1 c1", "B/p1 b1", "A/p2 a1"},
			},
		},
		{
			// Within one tenant both policies take arrival order, across registrations.
			name:    "one tenant: arrival order",
			slots:   1,
			running: []string{"A/p1 a0"},
			queued:  []string{"A/p3 a1", "A/p2 a2", "A/p1 a3"},
			answer:  []string{"A/p1 a0", "*", "*"},
			want: map[Policy][]string{
				PolicyFIFO: {"A/p3 a1", "A/p2 a2", "A/p1 a3"},
				PolicyFair: {"A/p3 a1", "A/p2 a2", "A/p1 a3"},
			},
		},
		{
			// A registration's calls run one at a time in arrival order: its second and
			// third calls stay queued although a slot is free.
			name:    "a registration runs one call at a time",
			slots:   2,
			running: []string{"A/p1 a0"},
			queued:  []string{"A/p1 a1", "A/p1 a2"},
			answer:  []string{"A/p1 a0", "*"},
			want: map[Policy][]string{
				PolicyFIFO: {"A/p1 a1", "A/p1 a2"},
				PolicyFair: {"A/p1 a1", "A/p1 a2"},
			},
		},
	}
	for _, tc := range tests {
		for _, policy := range []Policy{PolicyFIFO, PolicyFair} {
			t.Run(tc.name+"/"+policy.String(), func(t *testing.T) {
				got := runOrder(t, tc, policy)
				if diff := cmp.Diff(tc.want[policy], got); diff != "" {
					t.Errorf("admission order (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// runOrder builds the case's state and returns the calls admitted after each answer.
func runOrder(t *testing.T, tc orderCase, policy Policy) []string {
	t.Helper()
	h := newHarness(t, Options{MaxWorkers: tc.slots, Policy: policy})
	plugins := map[string]*Plugin{}
	invoke := func(c string) <-chan result {
		reg, op, ok := strings.Cut(c, " ")
		tenant, plugin, ok2 := strings.Cut(reg, "/")
		if !ok || !ok2 {
			t.Fatalf("bad call %q", c)
		}
		p := plugins[reg]
		if p == nil {
			p = h.register(tenant, plugin, Normal)
			plugins[reg] = p
		}
		return h.invoke(p, op)
	}
	for _, c := range tc.history {
		ch := invoke(c)
		h.next().answer()
		if r := h.wait(ch); r.err != nil {
			t.Fatalf("set-up call %s: %v", c, r.err)
		}
	}
	var results []<-chan result
	running := map[string]*fakeCall{}
	for _, c := range tc.running {
		results = append(results, invoke(c))
		fc := h.next()
		if fc.name() != c {
			t.Fatalf("set-up: %s was admitted, want %s", fc.name(), c)
		}
		running[c] = fc
	}
	for _, c := range tc.queued {
		results = append(results, invoke(c))
	}
	s := h.waitFor("the queued calls wait", func(s Snapshot) bool { return s.Queued == len(tc.queued) })
	if s.Active != len(tc.running) {
		t.Fatalf("set-up: %d calls active, want %d", s.Active, len(tc.running))
	}
	var got []string
	for _, a := range tc.answer {
		name := a
		if a == "*" {
			name = got[len(got)-1]
		}
		fc := running[name]
		if fc == nil {
			t.Fatalf("no running call %q to answer", name)
		}
		delete(running, name)
		fc.answer()
		next := h.next()
		got = append(got, next.name())
		running[next.name()] = next
	}
	for _, fc := range running {
		fc.answer()
	}
	for len(got) < len(tc.queued) { // calls admitted after the recorded ones
		h.next().answer()
		got = append(got, "(unrecorded)")
	}
	for _, r := range results {
		if res := h.wait(r); res.err != nil {
			t.Errorf("a call failed: %v", res.err)
		}
	}
	return got[:len(tc.answer)]
}
