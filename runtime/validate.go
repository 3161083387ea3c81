package runtime

import (
	"fmt"
)

// prepareDispatch copies the launch NewDispatch sealed into l and appends
// the spans its bindings touch (weights excluded: nothing writes them, so
// they order nothing). All a sealed dispatch needs checking is that it
// exists and belongs to this session: everything else NewDispatch proved
// stays true until Close. Errors do not say which command failed; the
// caller adds that. The caller holds s.mu.
func (s *Session) prepareDispatch(d *Dispatch, l *launchCmd, spans []span) ([]span, error) {
	sd := d.p
	if sd == nil {
		return spans, zeroDispatch
	}
	if _, err := s.kernel(sd.kernel); err != nil {
		return spans, err
	}
	*l = sd.launch
	return append(spans, sd.spans...), nil
}

// packArgs checks args (a count other than ck's parameters is refused) and packs them into out; with track it also appends the spans
// the buffer bindings touch, weights excluded. The caller holds s.mu.
//
// The loop is every check of argError in plain comparisons, with no
// message built: any argument that fails one goes to argError, which runs
// the checks again in order and says what is wrong. Keeping fmt out of
// this function keeps its frame small, which direct launches feel.
func (s *Session) packArgs(ck *compiledKernel, args []Arg, out []launchArg, spans []span, track bool) ([]span, error) {
	params := ck.info.Params
	if len(args) != len(params) {
		return spans, s.argError(ck, args, -1)
	}
	// kinds and out have a slot per parameter by construction; saying so
	// lets the compiler drop the loop's bounds checks.
	kinds, out := ck.kinds[:len(params)], out[:len(params)]
	allocs := s.allocs
	for i := range args {
		a := &args[i]
		want := kinds[i]
		if a.kind != want {
			return spans, s.argError(ck, args, i)
		}
		o := &out[i]
		if want == argVector {
			lanes, ok := packVector(a.vec, ck.vectors[i])
			if !ok {
				return spans, s.argError(ck, args, i)
			}
			o.Buffer, o.Mem, o.Off, o.N, o.Bits, o.Size, o.Lanes = false, nil, 0, 0, 0, len(lanes), lanes
			continue
		}
		if want != argBuffer {
			size := params[i].Bytes
			bits, ok := scalarBits(a, size)
			if !ok {
				return spans, s.argError(ck, args, i)
			}
			// Field by field: a composite literal is built on the stack
			// and block-copied, which costs more than the checks.
			o.Buffer, o.Mem, o.Off, o.N, o.Bits, o.Size = false, nil, 0, 0, bits, size
			continue
		}
		r := &a.binding.Region
		acc := a.binding.Access
		// s.id is never 0, so this also refuses the zero Region.
		if r.sess != s.id || int(r.alloc) >= len(allocs) {
			return spans, s.argError(ck, args, i)
		}
		al := allocs[r.alloc]
		if al == nil || r.off < 0 || r.n < 0 || r.off > al.size || r.n > al.size-r.off ||
			acc > AccessReadWrite || !acc.Covers(params[i].Access) || (al.weight && acc.Writes()) ||
			params[i].Align > 1 && r.off&(params[i].Align-1) != 0 {
			return spans, s.argError(ck, args, i)
		}
		o.Buffer, o.Mem, o.Off, o.N, o.Bits, o.Size = true, al.mem, r.off, r.n, 0, 0
		if track && !al.weight {
			spans = append(spans, span{alloc: r.alloc, off: r.off, n: r.n, acc: acc})
		}
	}
	return spans, nil
}

// argError says why argument i of a dispatch of ck is refused (i < 0: the
// count is wrong), running the checks of packArgs one at a time, in order.
// An argument it finds nothing wrong with means packArgs and it disagree,
// a bug reported as such rather than a launch.
//
//go:noinline
func (s *Session) argError(ck *compiledKernel, args []Arg, i int) error {
	name, params := ck.info.Export, ck.info.Params
	if i < 0 || len(args) != len(params) {
		return fmt.Errorf("%w: kernel %s: %d arguments, its launch signature has %d", ErrArgument, name, len(args), len(params))
	}
	a, p := &args[i], &params[i]
	if a.kind != ck.kinds[i] {
		return fmt.Errorf("%w: kernel %s: parameter %%%s (#%d) is %s, got %s", ErrArgument, name, p.Name, i, p.Type, a.kind)
	}
	if a.kind == argVector {
		if a.vec == nil {
			return fmt.Errorf("%w: kernel %s: parameter %%%s: a vector Arg without lanes (make vector arguments with Vector)", ErrArgument, name, p.Name)
		}
		return fmt.Errorf("%w: kernel %s: parameter %%%s %v", ErrArgument, name, p.Name, vectorError(a.vec, ck.vectors[i], p.Type))
	}
	if a.kind != argBuffer {
		if _, err := packScalar(a, p.Bytes); err != nil {
			return fmt.Errorf("%w: kernel %s: parameter %%%s: %v", ErrArgument, name, p.Name, err)
		}
		return fmt.Errorf("%w: kernel %s: parameter %%%s: %v refused without a reason (internal error)", ErrArgument, name, p.Name, *a)
	}
	b := &a.binding
	al, err := s.region(b.Region)
	if err != nil {
		return fmt.Errorf("kernel %s: parameter %%%s: %w", name, p.Name, err)
	}
	if b.Access > AccessReadWrite {
		return fmt.Errorf("%w: kernel %s: parameter %%%s: invalid access %v", ErrArgument, name, p.Name, b.Access)
	}
	if !b.Access.Covers(p.Access) {
		return fmt.Errorf("%w: kernel %s: parameter %%%s is bound %s but the kernel body needs %s", ErrArgument, name, p.Name, b.Access, p.Access)
	}
	if al.weight && b.Access.Writes() {
		return fmt.Errorf("%w: kernel %s: parameter %%%s binds weight %v for %s", ErrWeightWrite, name, p.Name, b.Region, b.Access)
	}
	if p.Align > 1 && b.Region.off%p.Align != 0 {
		return fmt.Errorf("%w: kernel %s: parameter %%%s: region offset %d is not a multiple of %d, the element size of the kernel's views of it (%s)",
			ErrArgument, name, p.Name, b.Region.off, p.Align, p.Type)
	}
	return fmt.Errorf("%w: kernel %s: parameter %%%s: %v refused without a reason (internal error)", ErrArgument, name, p.Name, *a)
}

// scalarBits is packScalar's value and whether the carrier holds it,
// without building the refusal.
func scalarBits(a *Arg, size int) (uint64, bool) {
	switch a.kind {
	case argIndex:
		v := int64(a.val)
		if size < 8 {
			lo, hi := -int64(1)<<(size*8-1), int64(1)<<(size*8-1)-1
			if v < lo || v > hi {
				return 0, false
			}
			return uint64(v) & (1<<(size*8) - 1), true
		}
		return uint64(v), true
	case argOffset:
		if size < 8 && a.val>>(size*8) != 0 {
			return 0, false
		}
	}
	return a.val, true
}

// packScalar returns a's value at a carrier of size bytes, zero-extended,
// refusing values the carrier cannot hold (binding mistake 7).
func packScalar(a *Arg, size int) (uint64, error) {
	if bits, ok := scalarBits(a, size); ok {
		return bits, nil
	}
	if a.kind == argIndex {
		return 0, fmt.Errorf("index %d does not fit the %d-bit index carrier", int64(a.val), size*8)
	}
	return 0, fmt.Errorf("offset %d does not fit the %d-bit offset carrier", a.val, size*8)
}

// prepareFill checks f into c and appends the span it writes; the caller
// holds s.mu.
func (s *Session) prepareFill(f *Fill, c *fillCmd, spans []span) ([]span, error) {
	al, err := s.region(f.Region)
	if err != nil {
		return spans, fmt.Errorf("fill: %w", err)
	}
	if al.weight {
		return spans, fmt.Errorf("%w: fill of weight %v", ErrWeightWrite, f.Region)
	}
	if f.Region.off%4 != 0 || f.Region.n%4 != 0 {
		return spans, fmt.Errorf("%w: fill of %v: offset and length must be multiples of 4", ErrArgument, f.Region)
	}
	spans = append(spans, span{alloc: f.Region.alloc, off: f.Region.off, n: f.Region.n, acc: AccessWrite})
	*c = fillCmd{Mem: al.mem, Off: f.Region.off, N: f.Region.n, Value: f.Value}
	return spans, nil
}

// preparer packs the commands of one Record or Run into blocks, so
// recording many commands makes a handful of allocations, not several per
// command.
type preparer struct {
	s        *Session
	launches []launchCmd
	fills    []fillCmd
	spans    []span
	// maxBindings bounds the bindings of all commands, for sizing.
	maxBindings int
}

func newPreparer(s *Session, cmds []Command) *preparer {
	p := &preparer{}
	p.reset(s, cmds)
	return p
}

// reset readies p for cmds, keeping the blocks of an earlier use where they
// are big enough: Run reuses one preparer, since nothing it prepared is
// kept once the commands have been issued.
func (p *preparer) reset(s *Session, cmds []Command) {
	p.s = s
	nl, nf, na := 0, 0, 0
	for _, c := range cmds {
		switch c := c.(type) {
		case Dispatch:
			nl, na = nl+1, na+c.nargs()
		case *Dispatch:
			if c != nil {
				nl, na = nl+1, na+c.nargs()
			}
		default:
			nf++
		}
	}
	p.launches = reuse(p.launches, nl)
	p.fills = reuse(p.fills, nf)
	p.spans = p.spans[:0]
	p.maxBindings = na + nf
}

// drop clears what p prepared, so a reused preparer keeps no kernel or
// memory reachable between uses.
func (p *preparer) drop() {
	clear(p.launches)
	clear(p.fills)
	p.s = nil
}

// reuse is s emptied if it can hold n, else a new slice that can.
func reuse[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:0]
	}
	return make([]T, 0, n)
}

// prepare checks and packs one command of any kind; p.spans holds the spans
// it touches until the next call.
func (p *preparer) prepare(c Command) (graphNode, error) {
	var err error
	p.spans = p.spans[:0]
	var d *Dispatch
	switch c := c.(type) {
	case Dispatch:
		d = &c
	case *Dispatch:
		d = c
	case Fill:
		return p.fill(&c)
	case *Fill:
		if c != nil {
			return p.fill(c)
		}
	}
	if d == nil {
		return graphNode{}, fmt.Errorf("%w: unsupported command %T", ErrArgument, c)
	}
	if len(p.launches) == cap(p.launches) {
		p.launches = make([]launchCmd, 0, 16)
	}
	p.launches = p.launches[:len(p.launches)+1]
	l := &p.launches[len(p.launches)-1]
	p.spans, err = p.s.prepareDispatch(d, l, p.spans)
	return graphNode{Launch: l}, err
}

func (p *preparer) fill(f *Fill) (graphNode, error) {
	if len(p.fills) == cap(p.fills) {
		p.fills = make([]fillCmd, 0, 16)
	}
	p.fills = p.fills[:len(p.fills)+1]
	c := &p.fills[len(p.fills)-1]
	var err error
	p.spans, err = p.s.prepareFill(f, c, p.spans)
	return graphNode{Fill: c}, err
}
