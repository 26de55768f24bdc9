package clock

import (
	"testing"
	"time"
)

func TestNilIsTheMachinesClock(t *testing.T) {
	var c Clock
	before := time.Now()
	got := c.Now()
	if got.Before(before) || got.After(time.Now()) {
		t.Fatalf("nil clock says %v, not between %v and now", got, before)
	}
}

func TestFixed(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	c := Fixed(at)
	if got := c.Now(); !got.Equal(at) {
		t.Fatalf("Fixed(%v).Now() = %v", at, got)
	}
	if got := c.Since(at.Add(-time.Minute)); got != time.Minute {
		t.Fatalf("Since a minute before = %v, want 1m", got)
	}
}
