package runtime

import (
	"errors"
	"testing"
)

func TestScratchPlanner(t *testing.T) {
	var p ScratchPlanner[string]
	reqs := []struct {
		key         string
		size        int
		first, last int
	}{
		{"a", 100, 0, 2},
		{"b", 50, 2, 3},  // overlaps a at step 2 (inclusive): new slot
		{"c", 80, 3, 5},  // a is free (last use 2 < 3) and fits
		{"d", 40, 4, 6},  // b free since 3; a taken by c: reuse b
		{"e", 200, 7, 8}, // nothing fits: new slot
		{"f", 30, 7, 9},  // a (100) and b (50) free: best fit picks b
	}
	for _, r := range reqs {
		if err := p.Request(r.key, r.size, r.first, r.last); err != nil {
			t.Fatal(err)
		}
	}
	pl := p.Plan()
	want := map[string]int{"a": 0, "b": 1, "c": 0, "d": 1, "e": 2, "f": 1}
	for k, slot := range want {
		if got, ok := pl.Slot(k); !ok || got != slot {
			t.Errorf("%s: slot %d, want %d", k, got, slot)
		}
	}
	if len(pl.Slots) != 3 || pl.Bytes() != 350 {
		t.Errorf("slots %v", pl.Slots)
	}
	if err := p.Request("a", 1, 0, 0); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("duplicate: %v", err)
	}
	if err := p.Request("z", 1, 5, 4); !errors.Is(err, ErrArgument) {
		t.Errorf("reversed lifetime: %v", err)
	}
	if err := p.Request("z", -1, 0, 0); !errors.Is(err, ErrArgument) {
		t.Errorf("negative size: %v", err)
	}
	s := testSession(t)
	regions, err := pl.Allocate(s)
	if err != nil {
		t.Fatal(err)
	}
	if regions["c"].Len() != 80 || regions["a"].Len() != 100 {
		t.Errorf("region sizes a=%d c=%d", regions["a"].Len(), regions["c"].Len())
	}
	// Shared slots are the same allocation; the planner never overlaps live
	// requests, which Record then sees as ordinary write-after-read edges.
	if regions["a"].alloc != regions["c"].alloc || regions["a"].alloc == regions["b"].alloc {
		t.Errorf("slot sharing not reflected in regions")
	}
}

// TestScratchNoOverlapRandom: for random requests, two requests sharing a
// slot never have overlapping inclusive lifetimes, and each fits its slot.
func TestScratchNoOverlapRandom(t *testing.T) {
	var p ScratchPlanner[int]
	type life struct{ size, first, last int }
	lives := map[int]life{}
	x := uint32(12345)
	next := func(n int) int { x = x*1664525 + 1013904223; return int(x>>8) % n }
	for i := range 300 {
		f := next(100)
		l := life{size: 1 + next(1000), first: f, last: f + next(10)}
		lives[i] = l
		if err := p.Request(i, l.size, l.first, l.last); err != nil {
			t.Fatal(err)
		}
	}
	pl := p.Plan()
	for i, a := range lives {
		si, _ := pl.Slot(i)
		if pl.Slots[si] < a.size {
			t.Fatalf("request %d (%d bytes) in slot of %d", i, a.size, pl.Slots[si])
		}
		for j, b := range lives {
			sj, _ := pl.Slot(j)
			if i != j && si == sj && a.first <= b.last && b.first <= a.last {
				t.Fatalf("requests %d %v and %d %v share slot %d", i, a, j, b, si)
			}
		}
	}
	if len(pl.Slots) >= 300 {
		t.Errorf("no reuse: %d slots", len(pl.Slots))
	}
}
