package interp

import (
	"errors"
	"fmt"

	"github.com/loomgen/loomgen/loom"
)

// ErrRace: the checked mode found two work-items touching the same bytes,
// at least one writing, with nothing ordering them (see Sanitize).
var ErrRace = errors.New("interp: data race")

// Sanitize selects the checked mode of a compiled kernel. With either field
// set, Compile keeps only the exact per-lane form of every op (no batched
// workgroups, no fused or block forms, no hoisting), so every load and
// store of every active lane is seen, and Run records what it touches:
//
//   - Races: two lanes of one workgroup touch the same bytes of workgroup
//     memory, at least one writes, and no kernel.barrier lies between them;
//   - GlobalRaces: two workgroups of one dispatch touch the same bytes of a
//     bound buffer, at least one writes (a dispatch has no barrier between
//     workgroups). Run then executes the workgroups one at a time.
//   - both: also two lanes of one workgroup touching the same bytes of a
//     bound buffer, at least one writing, with no kernel.barrier between
//     (a barrier orders a workgroup's global accesses as it does its
//     workgroup memory's).
//
// Atomic accesses are exempt: they are ordered by definition. A race stops
// the dispatch like any trap, with an ErrRace RunError whose Event describes
// both accesses. Out-of-bounds accesses carry an Event in every mode.
type Sanitize struct {
	Races       bool
	GlobalRaces bool
}

func (s Sanitize) on() bool { return s.Races || s.GlobalRaces }

// Event is a structured sanitizer report, the data check.expect.event
// matches: Type is "tsan_report" (a race) or "asan_report" (an access
// outside its view or buffer).
type Event struct {
	Type  string // tsan_report, asan_report
	Check string // data_race, out_of_bounds
	// Memory is the space of the bytes: workgroup, global or private.
	Memory string
	// Access is the reporting access (read or write); PriorAccess the
	// earlier one it conflicts with (races only).
	Access, PriorAccess string
	// Length is the access width in bytes; Offset its byte offset in the
	// workgroup allocation or the bound buffer.
	Length int
	Offset int64
	// Param is the launch parameter whose buffer holds the bytes (global
	// memory), or -1.
	Param int
	// Pos and Op name the reporting access; PriorPos the earlier one.
	Pos      loom.Pos
	Op       string
	PriorPos loom.Pos
	// Coordinates of the two accesses.
	Workgroup, Workitem           [3]int
	PriorWorkgroup, PriorWorkitem [3]int
}

// String is a one-line description of the event.
func (e *Event) String() string {
	if e.Type == "tsan_report" {
		return fmt.Sprintf("%s: %s %s of %d bytes at %s offset %d by workgroup %v workitem %v at %s races with %s by workgroup %v workitem %v at %s",
			e.Type, e.Check, e.Access, e.Length, e.Memory, e.Offset, e.Workgroup, e.Workitem, e.Pos,
			e.PriorAccess, e.PriorWorkgroup, e.PriorWorkitem, e.PriorPos)
	}
	return fmt.Sprintf("%s: %s %s of %d bytes at %s offset %d by workgroup %v workitem %v at %s",
		e.Type, e.Check, e.Access, e.Length, e.Memory, e.Offset, e.Workgroup, e.Workitem, e.Pos)
}

func memorySpace(root int32) string {
	switch root {
	case rootWorkgroup:
		return "workgroup"
	case rootPrivate:
		return "private"
	}
	return "global"
}

func accessWord(write bool) string {
	if write {
		return "write"
	}
	return "read"
}

// shadow is what the checked mode remembers of one byte: the last write
// and the last read, each with the time (an epoch of the workgroup's
// barriers, or a workgroup number for global memory), the actor (a lane
// or a workgroup) and the op; multi marks reads by more than one actor.
type shadow struct {
	wTime, rTime   int64
	wWho, rWho     int32
	rMulti         bool
	wOp, rOp       *loom.Op
	wLane, rLane   int32 // for global memory: the lane within wWho / rWho
	wValid, rValid bool
}

// sanFrame is a frame's workgroup-memory shadow: one array per allocation
// (keyed by its first byte) and the current barrier epoch.
type sanFrame struct {
	epoch int64
	wg    map[*byte][]shadow
}

// sanRun is a dispatch's global-memory shadow, one array per bound buffer:
// mem by workgroup, lanes by lane within the running workgroup (its cells
// carry the frame's epoch, so entries of earlier workgroups and barrier
// intervals are stale without clearing).
type sanRun struct {
	mem, lanes map[*byte][]shadow
}

// shadowOf returns the shadow array of mem, sized to it.
func shadowOf(m map[*byte][]shadow, mem []byte) []shadow {
	key := &mem[:1][0]
	s := m[key]
	if len(s) < len(mem) {
		s = make([]shadow, len(mem))
		m[key] = s
	}
	return s
}

// resetWG forgets a workgroup allocation's history (a new workgroup).
func (s *sanFrame) resetWG(mem []byte) {
	if len(mem) == 0 {
		return
	}
	clear(shadowOf(s.wg, mem))
}

// touch records lane's access of size bytes at off in v and reports a race
// with an earlier access; the caller has checked the bounds.
func (fr *frame) touch(a *access, v *view, off int64, lane int, write bool) error {
	return fr.touchAs(a, v, off, lane, lane, write)
}

// touchAs is touch with the access attributed to lane who of the
// workgroup: a subgroup-collective access (a fragment load or store, whose
// lanes may replicate elements) is its subgroup's first lane's, so lanes
// of one subgroup do not race with each other within the op.
func (fr *frame) touchAs(a *access, v *view, off int64, lane, who int, write bool) error {
	size := a.cd.size
	switch {
	case v.root == rootWorkgroup && fr.san != nil:
		cells := shadowOf(fr.san.wg, v.mem)[off : off+int64(size)]
		return raceCheck(cells, fr.san.epoch, int32(who), int32(lane), a, v, off, lane, write, false)
	case v.root >= 0 && fr.r.san != nil:
		cells := shadowOf(fr.r.san.mem, v.mem)[off : off+int64(size)]
		if err := raceCheck(cells, 0, int32(fr.wgLin), int32(lane), a, v, off, lane, write, true); err != nil || fr.san == nil {
			return err
		}
		// With both checks on, workgroups run one at a time on one
		// frame, whose epoch then names a workgroup's barrier interval.
		cells = shadowOf(fr.r.san.lanes, v.mem)[off : off+int64(size)]
		return raceCheck(cells, fr.san.epoch, int32(who), int32(lane), a, v, off, lane, write, false)
	}
	return nil
}

// raceCheck updates cells for an access by who (a lane for workgroup
// memory, a workgroup for global memory) at time now. In workgroup memory
// an access conflicts with another lane's in the same epoch; in global
// memory with another workgroup's at any time of the dispatch.
func raceCheck(cells []shadow, now int64, who, lane int32, a *access, v *view, off int64, l int, write, global bool) error {
	for i := range cells {
		c := &cells[i]
		conflict := func(valid bool, t int64, w int32) bool {
			return valid && w != who && (global || t == now)
		}
		var prior *loom.Op
		var priorWho, priorLane int32
		priorWrite := false
		switch {
		case conflict(c.wValid, c.wTime, c.wWho):
			prior, priorWho, priorLane, priorWrite = c.wOp, c.wWho, c.wLane, true
		case write && c.rValid && (global || c.rTime == now) && (c.rWho != who || c.rMulti):
			prior, priorWho, priorLane = c.rOp, c.rWho, c.rLane
		}
		if prior != nil {
			ev := &Event{Type: "tsan_report", Check: "data_race", Memory: memorySpace(v.root),
				Access: accessWord(write), PriorAccess: accessWord(priorWrite), Length: a.cd.size,
				Offset: off, Param: -1, PriorPos: prior.Pos}
			if v.root >= 0 {
				ev.Param = int(v.root)
			}
			t := newTrap(a.op, l, ErrRace, "%s of %d bytes at %s offset %d races with the %s at %s (%s)",
				ev.Access, ev.Length, ev.Memory, off, ev.PriorAccess, prior.Pos, priorWhat(global))
			t.event = ev
			if global {
				t.priorGroup, t.priorLane = int(priorWho), int(priorLane)
			} else {
				t.priorGroup, t.priorLane = -1, int(priorWho)
			}
			return t
		}
	}
	for i := range cells {
		c := &cells[i]
		if write {
			c.wValid, c.wTime, c.wWho, c.wLane, c.wOp = true, now, who, lane, a.op
			continue
		}
		if c.rValid && (global || c.rTime == now) && c.rWho != who {
			c.rMulti = true
		} else if !c.rValid || (!global && c.rTime != now) {
			c.rMulti = false
		}
		c.rValid, c.rTime, c.rWho, c.rLane, c.rOp = true, now, who, lane, a.op
	}
	return nil
}

func priorWhat(global bool) string {
	if global {
		return "another workgroup of this dispatch"
	}
	return "another work-item of this workgroup, with no barrier between"
}

// outOfBounds builds the asan event of an access that failed its bounds
// check.
func (a *access) outOfBounds(v *view, off int64, write bool) *Event {
	ev := &Event{Type: "asan_report", Check: "out_of_bounds", Memory: memorySpace(v.root),
		Access: accessWord(write), Length: a.cd.size, Offset: off, Param: -1, Pos: a.op.Pos, Op: a.op.Name}
	if v.root >= 0 {
		ev.Param = int(v.root)
	}
	return ev
}
