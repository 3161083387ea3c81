package runtime

import (
	"fmt"
	"sort"
)

// ScratchPlanner assigns temporary buffers to as few allocations as their
// lifetimes allow. Each request names a key, a size in bytes and an inclusive
// lifetime [First, Last] in some step numbering (usually command indices); a
// slot is reused only by a request whose First is after the slot's last use.
// Among free slots the smallest that fits is chosen (best fit); when none
// fits a new slot is made. The zero value is ready to use.
type ScratchPlanner[K comparable] struct {
	reqs  []scratchReq[K]
	index map[K]int
}

type scratchReq[K comparable] struct {
	key         K
	size        int
	first, last int
}

// Request adds a temporary of size bytes live from step first through step
// last, inclusive.
func (p *ScratchPlanner[K]) Request(key K, size, first, last int) error {
	if size < 0 || size > maxAlloc {
		return fmt.Errorf("%w: scratch %v: size %d", ErrArgument, key, size)
	}
	if first < 0 || last < first {
		return fmt.Errorf("%w: scratch %v: lifetime [%d, %d]", ErrArgument, key, first, last)
	}
	if p.index == nil {
		p.index = map[K]int{}
	}
	if _, dup := p.index[key]; dup {
		return fmt.Errorf("%w: scratch %v requested twice", ErrDuplicateKey, key)
	}
	p.index[key] = len(p.reqs)
	p.reqs = append(p.reqs, scratchReq[K]{key: key, size: size, first: first, last: last})
	return nil
}

// ScratchPlan is a planner's assignment of requests to slots.
type ScratchPlan[K comparable] struct {
	// Slots are the sizes of the allocations the plan needs.
	Slots  []int
	assign map[K]int
	size   map[K]int
}

// Slot returns the slot a request was given.
func (pl *ScratchPlan[K]) Slot(key K) (int, bool) {
	i, ok := pl.assign[key]
	return i, ok
}

// Bytes is the total size of all slots.
func (pl *ScratchPlan[K]) Bytes() int {
	t := 0
	for _, s := range pl.Slots {
		t += s
	}
	return t
}

// Plan assigns every request to a slot. Requests are placed in order of
// first use (then request order), so the result is deterministic.
func (p *ScratchPlanner[K]) Plan() *ScratchPlan[K] {
	order := make([]int, len(p.reqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return p.reqs[order[a]].first < p.reqs[order[b]].first })
	pl := &ScratchPlan[K]{assign: make(map[K]int, len(p.reqs)), size: make(map[K]int, len(p.reqs))}
	var lastUse []int // per slot
	for _, ri := range order {
		r := p.reqs[ri]
		best := -1
		for s, size := range pl.Slots {
			if lastUse[s] >= r.first || size < r.size {
				continue
			}
			if best < 0 || size < pl.Slots[best] {
				best = s
			}
		}
		if best < 0 {
			best = len(pl.Slots)
			pl.Slots = append(pl.Slots, r.size)
			lastUse = append(lastUse, r.last)
		}
		lastUse[best] = max(lastUse[best], r.last)
		pl.assign[r.key] = best
		pl.size[r.key] = r.size
	}
	return pl
}

// Allocate makes one allocation per slot on s and returns each request's
// region: the first Size bytes of its slot.
func (pl *ScratchPlan[K]) Allocate(s *Session) (map[K]Region, error) {
	slots := make([]Region, len(pl.Slots))
	for i, n := range pl.Slots {
		r, err := s.Allocate(n)
		if err != nil {
			return nil, fmt.Errorf("scratch slot %d: %w", i, err)
		}
		slots[i] = r
	}
	out := make(map[K]Region, len(pl.assign))
	for k, i := range pl.assign {
		r, err := slots[i].Slice(0, pl.size[k])
		if err != nil {
			return nil, err
		}
		out[k] = r
	}
	return out, nil
}
