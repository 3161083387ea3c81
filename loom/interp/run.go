package interp

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/loomgen/loomgen/loom"
)

// runState is what one Run shares between its workers.
type runState struct {
	launch Launch
	args   []Arg
	// lid holds each lane's work-item id per axis.
	lid [3][]int64
	// params are the launch parameters' values, in register form.
	paramI map[int]int64
	paramF map[int]float64
	// paramLanes holds the lanes of vector parameters (ints or float bits
	// decoded to float64, per the slot's kind).
	paramLanes map[int][]int64
	paramLaneF map[int][]float64
	paramV     map[int]view
	// san is the global-memory shadow of a dispatch checked for races
	// between workgroups (sanitize.go); nil otherwise.
	san *sanRun
}

// framePool reuses frames between Runs with the same workgroup size.
type framePool struct {
	mu   sync.Mutex
	free []*frame
}

func (p *framePool) get(k *Kernel, L int) *frame {
	p.mu.Lock()
	for i, f := range p.free {
		if f.L == L {
			p.free = append(p.free[:i], p.free[i+1:]...)
			p.mu.Unlock()
			return f
		}
	}
	p.mu.Unlock()
	return k.newFrame(L)
}

func (p *framePool) put(f *frame) {
	f.r = nil
	p.mu.Lock()
	if len(p.free) < 64 {
		p.free = append(p.free, f)
	}
	p.mu.Unlock()
}

func (k *Kernel) newFrame(L int) *frame {
	fr := &frame{k: k, L: L}
	fr.I = make([][]int64, k.nI)
	fr.meta = make([]regMeta, k.nI)
	fr.F = make([][]float64, k.nF)
	fr.V = make([][]view, k.nV)
	for _, s := range k.slots {
		w := s.comps
		if !s.uni {
			w *= L
		}
		switch s.kind {
		case kInt:
			if len(fr.I[s.idx]) < w {
				fr.I[s.idx] = make([]int64, w)
			}
		case kFloat:
			if len(fr.F[s.idx]) < w {
				fr.F[s.idx] = make([]float64, w)
			}
		case kView:
			if len(fr.V[s.idx]) < w {
				fr.V[s.idx] = make([]view, w)
			}
		}
	}
	for _, s := range k.slots {
		if s.cst {
			r := fr.I[s.idx]
			for i := range r {
				r[i] = s.ci
			}
		}
	}
	for _, ci := range k.inits {
		if ci.s.kind == kInt {
			r := fr.I[ci.s.idx]
			for i := range r {
				r[i] = ci.i
			}
		} else {
			r := fr.F[ci.s.idx]
			for i := range r {
				r[i] = ci.f
			}
		}
	}
	nm := k.maxDepth + 3
	fr.masks = make([][]bool, nm)
	fr.miv = make([]maskIv, nm)
	fr.steps = make([][]int64, nm)
	for i := range fr.masks {
		fr.masks[i] = make([]bool, L)
		fr.steps[i] = make([]int64, L)
	}
	fr.alive = make([]bool, L)
	fr.top = make([]bool, L)
	fr.all = make([]bool, L)
	for l := range fr.all {
		fr.all[l] = true
	}
	fr.pre, fr.suf = make([]bool, 2*L), make([]bool, 2*L)
	copy(fr.pre, fr.all)
	copy(fr.suf[L:], fr.all)
	mc := max(k.maxComps, 1)
	for i := range fr.scrI {
		fr.scrI[i] = make([]int64, mc*L)
		fr.scrF[i] = make([]float64, mc*L)
	}
	fr.wgMem = make([][]byte, len(k.allocas))
	if k.san.Races {
		fr.san = &sanFrame{epoch: 1, wg: map[*byte][]shadow{}}
	}
	return fr
}

// Run executes one dispatch. args follow the launch signature. Workgroups
// run in parallel on up to Options.Workers goroutines. A failure stops the
// workgroups after the failing one; the error returned is the lowest
// failing workgroup's, whatever the number of workers.
func (k *Kernel) Run(l Launch, args []Arg) error {
	L := 1
	for ax := 0; ax < 3; ax++ {
		if l.WorkgroupSize[ax] <= 0 || l.Workgroups[ax] < 0 || l.WorkgroupStorage < 0 || l.WorkgroupStorage > 1<<30 {
			return fmt.Errorf("kernel %s: launch %v: workgroup sizes must be positive, counts non-negative and dynamic workgroup storage within [0, 2^30] bytes: %w", k.export, l, ErrArgs)
		}
		L *= l.WorkgroupSize[ax]
	}
	if L > 1<<16 {
		return fmt.Errorf("kernel %s: workgroup of %d work-items is too large: %w", k.export, L, ErrArgs)
	}
	total := l.Workgroups[0] * l.Workgroups[1] * l.Workgroups[2]
	if total == 0 {
		return nil
	}
	if len(args) != len(k.params) {
		return fmt.Errorf("kernel %s: %d arguments for %d launch parameters: %w", k.export, len(args), len(k.params), ErrArgs)
	}
	for ax := 0; ax < 3; ax++ {
		if int64(l.Workgroups[ax])*int64(l.WorkgroupSize[ax]) > k.tgt.idMax+1 {
			return fmt.Errorf("kernel %s: %d work-items along axis %d exceed the %d-bit index carrier: %w", k.export, l.Workgroups[ax]*l.WorkgroupSize[ax], ax, k.tgt.indexBits, ErrOverflow)
		}
	}
	rs := &runState{launch: l, args: args, lid: k.lids.get(l.WorkgroupSize, L)}
	if k.san.GlobalRaces {
		rs.san = &sanRun{mem: map[*byte][]shadow{}, lanes: map[*byte][]shadow{}}
	}
	if err := k.bindParams(rs); err != nil {
		return err
	}
	// Batches of K workgroups run as one of K*L lanes (see Kernel.batch);
	// the groups left over run one by one.
	K, nb := 1, 0
	var rsb *runState
	lanes := batchLanes
	if len(k.allocas) > 0 {
		lanes = wgBatchLanes
	}
	if kb := k.batch; kb != nil && ((L < lanes && k.batchPays(L)) || batchGroups > 1) {
		// Registers grow with the lanes: a kernel with many (or wide
		// vector) values gets smaller batches.
		K = min(lanes, batchBytes/max(kb.laneBytes(), 1)) / L
		if len(k.allocas) > 0 {
			// Each group's blocks, rounded as the batched alloca does.
			K = min(K, wgBatchBytes/max(64*len(k.allocas)+k.staticWG, 1))
		}
		if batchGroups > 1 {
			K = batchGroups
		}
		if K > 1 {
			nb = total / K
		}
	}
	if nb > 0 {
		rsb = &runState{launch: l, args: args, lid: k.batch.lids.get(l.WorkgroupSize, K*L)}
		if err := k.batch.bindParams(rsb); err != nil {
			return err
		}
	}
	units := nb + total - nb*K
	workers := min(k.workers, units)
	claims := claimer{units: int64(units), workers: int64(workers)}
	claims.stop.Store(int64(units))
	var firstErr error
	var errMu sync.Mutex
	// fail keeps the error of the lowest failing unit, and units above it
	// stop: the error a dispatch returns does not depend on the number of
	// workers or on which worker got there first.
	fail := func(u int, err error) {
		errMu.Lock()
		if int64(u) < claims.stop.Load() {
			firstErr = err
			claims.stop.Store(int64(u))
		}
		errMu.Unlock()
	}
	work := func() {
		var fr, fb *frame
		// single gets the unbatched frame, set up on first use.
		single := func() (*frame, error) {
			if fr == nil {
				fr = k.frames.get(k, L)
				fr.r, fr.grp = rs, L
				if err := k.loadParams(fr); err != nil {
					return nil, err
				}
				k.prologue(fr)
			}
			return fr, nil
		}
		batches := int64(0)
		defer func() {
			if fr != nil {
				k.frames.put(fr)
			}
			if fb != nil {
				k.batch.frames.put(fb)
			}
			if batches > 0 {
				batchesRun.Add(batches)
			}
		}()
		var u, end int
		for {
			if u == end {
				if u, end = claims.next(); u >= end {
					return
				}
			}
			if int64(u) >= claims.stop.Load() {
				return
			}
			var err error
			if u < nb {
				if fb == nil {
					fb = k.batch.frames.get(k.batch, K*L)
					fb.r, fb.grp = rsb, L
					if err := k.batch.loadParams(fb); err != nil {
						fail(u, err)
						return
					}
				}
				batches++
				if err = k.batch.runGroup(fb, u*K); err != nil && !noRerun {
					// The first trap a batch meets need not be its
					// lowest failing group's (rerun.go).
					if from, to := k.rerunGroups(err, u*K, K, &l, args); from < to {
						f, ferr := single()
						if ferr != nil {
							fail(u, ferr)
							return
						}
						// Up to the failing group, then (when none
						// failed alone: a trap only the batch meets, as
						// its workgroup memory past wgBatchBytes) the
						// rest of the batch too.
						var e error
						for g := from; g < u*K+K && e == nil; g++ {
							e = k.runGroup(f, g)
						}
						err = e
					}
				}
			} else {
				f, ferr := single()
				if ferr != nil {
					fail(u, ferr)
					return
				}
				err = k.runGroup(f, nb*K+u-nb)
			}
			if err != nil {
				fail(u, err)
				return
			}
			u++
		}
	}
	if workers <= 1 {
		work()
		return firstErr
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(work)
	}
	wg.Wait()
	return firstErr
}

// runGroup runs workgroup g (linear index) on fr.
func (k *Kernel) runGroup(fr *frame, g int) (err error) {
	l := fr.r.launch
	fr.wgLin = g
	if fr.san != nil {
		fr.san.epoch++ // nothing of an earlier workgroup races with this one
	}
	fr.wg[0] = int64(g % l.Workgroups[0])
	fr.wg[1] = int64(g / l.Workgroups[0] % l.Workgroups[1])
	fr.wg[2] = int64(g / (l.Workgroups[0] * l.Workgroups[1]))
	if !fr.clean {
		// Only kernel.exit clears lanes of the top mask and alive; after a
		// group where every lane stayed, both are still all set.
		for i := range fr.top {
			fr.top[i] = true
			fr.alive[i] = true
		}
		fr.clean = true
	}
	fr.nalive = fr.L
	fr.mask, fr.nact, fr.lo, fr.hi = fr.top, fr.L, 0, fr.L
	fr.pw.ok = false // a fault may have left a guard's window set
	defer func() { fr.clean = fr.nalive == fr.L && err == nil }()
	defer func() {
		if p := recover(); p != nil {
			err = &RunError{Kernel: k.export, Pos: k.kernel.Op.Pos, Op: "kernel", Workgroup: fr.wgCoords(),
				Msg: fmt.Sprintf("executor fault: %v\n%s", p, debug.Stack()), Class: ErrInternal}
		}
	}()
	code := k.code
	if fr.hoisted {
		code = k.body
	}
	e := runCode(fr, code)
	if e == nil || e == errAllExited {
		return nil
	}
	var t *trap
	if errors.As(e, &t) {
		re := &RunError{Kernel: k.export, Pos: t.op.Pos, Op: t.op.Name, Workgroup: fr.wgCoords(), Msg: t.msg, Class: t.class}
		if t.lane >= 0 && t.lane < fr.L {
			// A batch's lane t is in its (t/grp)th workgroup.
			for ax := 0; ax < 3; ax++ {
				re.Workgroup[ax] = groupCoord(&fr.r.launch, g+t.lane/fr.grp, ax)
			}
			re.HasItem = true
			for ax := 0; ax < 3; ax++ {
				re.Workitem[ax] = int(fr.r.lid[ax][t.lane])
			}
		}
		if t.event != nil {
			ev := *t.event
			ev.Pos, ev.Op, ev.Workgroup, ev.Workitem = t.op.Pos, t.op.Name, re.Workgroup, re.Workitem
			if t.class == ErrRace {
				pg := g
				if t.priorGroup >= 0 {
					pg = t.priorGroup
				}
				for ax := 0; ax < 3; ax++ {
					ev.PriorWorkgroup[ax] = groupCoord(&fr.r.launch, pg, ax)
					ev.PriorWorkitem[ax] = int(fr.r.lid[ax][t.priorLane])
				}
			}
			re.Event = &ev
		}
		return re
	}
	return e
}

func (fr *frame) wgCoords() [3]int {
	return [3]int{int(fr.wg[0]), int(fr.wg[1]), int(fr.wg[2])}
}

// bindParams decodes the scalar arguments and checks buffers against the
// launch signature.
func (k *Kernel) bindParams(rs *runState) error {
	rs.paramI, rs.paramF, rs.paramV = map[int]int64{}, map[int]float64{}, map[int]view{}
	rs.paramLanes, rs.paramLaneF = map[int][]int64{}, map[int][]float64{}
	for i, s := range k.params {
		a := rs.args[i]
		name := "%" + k.kernel.Launch[i].Name
		if lt := k.kernel.Launch[i].Type; s.kind != kView && lt != nil && lt.Kind == loom.TypeVector {
			if err := k.bindVectorParam(rs, i, s, a, name); err != nil {
				return err
			}
			continue
		}
		switch s.kind {
		case kInt:
			if a.Buffer != nil {
				return fmt.Errorf("kernel %s: argument %d (%s: %s) is a scalar, got a buffer: %w", k.export, i, name, s.typ, ErrArgs)
			}
			nb := typeBits(&compiler{k: k}, s.typ)
			if nb < 64 && a.Bits>>uint(nb) != 0 {
				return fmt.Errorf("kernel %s: argument %d (%s: %s) has bits 0x%x beyond its %d-bit carrier: %w", k.export, i, name, s.typ, a.Bits, nb, ErrArgs)
			}
			v := int64(a.Bits)
			if s.typ.Kind != loom.TypeOffset {
				v = wrapBits(v, nb)
			}
			rs.paramI[i] = v
		case kFloat:
			if a.Buffer != nil {
				return fmt.Errorf("kernel %s: argument %d (%s: %s) is a scalar, got a buffer: %w", k.export, i, name, s.typ, ErrArgs)
			}
			f, _ := floatFormat(loom.Pos{}, s.typ)
			if s.typ.Bits < 64 && a.Bits>>uint(s.typ.Bits) != 0 {
				return fmt.Errorf("kernel %s: argument %d (%s: %s) has bits 0x%x beyond its %d-bit carrier: %w", k.export, i, name, s.typ, a.Bits, s.typ.Bits, ErrArgs)
			}
			rs.paramF[i] = f.fromBits(a.Bits)
		case kView:
			rs.paramV[i] = view{mem: a.Buffer, lim: int64(len(a.Buffer)), root: int32(i)}
		}
	}
	// View parameters take their shape from the type, whose dynamic dims
	// name scalar parameters.
	for i, ds := range k.pdims {
		if ds == nil && (k.params[i].typ.Kind != loom.TypeView) {
			continue
		}
		t := k.params[i].typ
		v := rs.paramV[i]
		dims := make([]int64, len(t.Dims))
		for d, dim := range t.Dims {
			dims[d] = dim.Size
			if ds != nil && ds[d] != nil {
				found := false
				for j, p := range k.params {
					if p == ds[d] {
						dims[d], found = rs.paramI[j], true
					}
				}
				if !found {
					return fmt.Errorf("kernel %s: %s: dimension of view parameter %%%s must name a launch parameter: %w", k.export, t.Pos, k.kernel.Launch[i].Name, ErrUnsupported)
				}
			}
			if dims[d] < 0 {
				return fmt.Errorf("kernel %s: view parameter %%%s has negative dimension %d: %w", k.export, k.kernel.Launch[i].Name, dims[d], ErrArgs)
			}
		}
		v.setDense(dims)
		rs.paramV[i] = v
	}
	return nil
}

// bindVectorParam decodes a vector launch parameter: its lanes come
// little-endian in Arg.Buffer, lane 0 first, each at its element's size
// (Bits cannot hold a vector).
func (k *Kernel) bindVectorParam(rs *runState, i int, s *slot, a Arg, name string) error {
	vt := k.kernel.Launch[i].Type
	cd, err := (&compiler{k: k}).codecFor(loom.Pos{}, vt.Elem)
	if err != nil {
		return fmt.Errorf("kernel %s: argument %d (%s: %s): %w", k.export, i, name, vt, err)
	}
	if len(a.Buffer) != s.comps*cd.size {
		return fmt.Errorf("kernel %s: argument %d (%s: %s) takes its %d lanes as %d little-endian bytes in Arg.Buffer, got %d: %w", k.export, i, name, vt, s.comps, s.comps*cd.size, len(a.Buffer), ErrArgs)
	}
	for e := range s.comps {
		b := a.Buffer[e*cd.size:]
		if s.kind == kFloat {
			rs.paramLaneF[i] = append(rs.paramLaneF[i], cd.loadF(b))
		} else {
			rs.paramLanes[i] = append(rs.paramLanes[i], cd.loadI(b))
		}
	}
	return nil
}

// loadParams writes the decoded parameters into a frame's registers.
func (k *Kernel) loadParams(fr *frame) error {
	for i, s := range k.params {
		if lanes, ok := fr.r.paramLanes[i]; ok {
			copy(fr.I[s.idx], lanes)
			continue
		}
		if lanes, ok := fr.r.paramLaneF[i]; ok {
			copy(fr.F[s.idx], lanes)
			continue
		}
		switch s.kind {
		case kInt:
			fr.I[s.idx][0] = fr.r.paramI[i]
		case kFloat:
			fr.F[s.idx][0] = fr.r.paramF[i]
		case kView:
			fr.V[s.idx][0] = fr.r.paramV[i]
		}
	}
	return nil
}

// claimer hands out runs of consecutive units (workgroups, or batches of
// them) to workers. One shared counter bumped per unit would cost a
// contended cache line per microsecond-sized group on many cores, so runs
// are long while much work is left; they shrink as it runs out (guided
// self-scheduling), so the workers finish within about one unit of each
// other instead of one long run.
type claimer struct {
	units, workers int64
	cursor         atomic.Int64
	// stop is read before every unit, cursor written at every claim: apart
	// on their own cache lines, a claim does not evict stop from the
	// other cores.
	_ [64]byte
	// stop is the lowest failed unit, or units; no unit from it on starts.
	stop atomic.Int64
}

// maxRun bounds a run: neighbouring groups write neighbouring output bytes,
// which stay in one core's cache, but a longer run gains nothing more.
const maxRun = 64

// next claims the next run [from, to); from ≥ to when none is left.
func (c *claimer) next() (from, to int) {
	for {
		cur := c.cursor.Load()
		if cur >= c.units {
			return 0, 0
		}
		n := min(maxRun, max(1, (c.units-cur)/(4*c.workers)))
		if c.cursor.CompareAndSwap(cur, cur+n) {
			return int(cur), int(cur + n)
		}
	}
}
