package runtime

import (
	"fmt"
)

// prepareDispatch checks d against its compiled kernel and packs it; it
// appends the spans its buffer bindings touch (weights excluded: nothing
// writes them, so they order nothing). The caller holds s.mu.
func (s *Session) prepareDispatch(d *Dispatch, where string, spans []span) (*launchCmd, []span, error) {
	ck, err := s.kernel(d.Kernel)
	if err != nil {
		return nil, spans, fmt.Errorf("%s: %w", where, err)
	}
	info := &ck.info
	name := info.Export
	if len(d.Args) != len(info.Params) {
		return nil, spans, fmt.Errorf("%w: %s: kernel %s: %d arguments, its launch signature has %d", ErrArgument, where, name, len(d.Args), len(info.Params))
	}
	for i := range 3 {
		if d.Workgroups[i] < 1 || d.Workgroups[i] > 1<<31-1 {
			return nil, spans, fmt.Errorf("%w: %s: kernel %s: workgroups %v: each count must be in [1, 2^31)", ErrArgument, where, name, d.Workgroups)
		}
		if d.WorkgroupSize[i] < 1 || d.WorkgroupSize[i] > 1<<20 {
			return nil, spans, fmt.Errorf("%w: %s: kernel %s: workgroup size %v: each size must be in [1, 2^20]", ErrArgument, where, name, d.WorkgroupSize)
		}
	}
	if info.Static && d.WorkgroupSize != info.WorkgroupSize {
		return nil, spans, fmt.Errorf("%w: %s: kernel %s: workgroup size %v, compiled with %v", ErrArgument, where, name, d.WorkgroupSize, info.WorkgroupSize)
	}
	l := &launchCmd{
		Kernel:        ck.dev,
		Name:          name,
		Workgroups:    d.Workgroups,
		WorkgroupSize: d.WorkgroupSize,
		Args:          make([]launchArg, len(d.Args)),
	}
	for i, a := range d.Args {
		p := &info.Params[i]
		want := ck.kinds[i]
		if a.kind != want {
			return nil, spans, fmt.Errorf("%w: %s: kernel %s: parameter %%%s (#%d) is %s, got %s", ErrArgument, where, name, p.Name, i, p.Type, a.kind)
		}
		if want != argBuffer {
			bits, err := packScalar(a, p.Bytes)
			if err != nil {
				return nil, spans, fmt.Errorf("%w: %s: kernel %s: parameter %%%s: %v", ErrArgument, where, name, p.Name, err)
			}
			l.Args[i] = launchArg{Bits: bits, Size: p.Bytes}
			continue
		}
		b := a.binding
		al, err := s.region(b.Region, fmt.Sprintf("kernel %s: parameter %%%s", name, p.Name))
		if err != nil {
			return nil, spans, fmt.Errorf("%s: %w", where, err)
		}
		if b.Access > AccessReadWrite {
			return nil, spans, fmt.Errorf("%w: %s: kernel %s: parameter %%%s: invalid access %v", ErrArgument, where, name, p.Name, b.Access)
		}
		if !b.Access.covers(p.Access) {
			return nil, spans, fmt.Errorf("%w: %s: kernel %s: parameter %%%s is bound %s but the kernel body needs %s", ErrArgument, where, name, p.Name, b.Access, p.Access)
		}
		if al.weight && b.Access.Writes() {
			return nil, spans, fmt.Errorf("%w: %s: kernel %s: parameter %%%s binds weight %v for %s", ErrWeightWrite, where, name, p.Name, b.Region, b.Access)
		}
		l.Args[i] = launchArg{Buffer: true, Mem: al.mem, Off: b.Region.off, N: b.Region.n}
		if !al.weight {
			spans = append(spans, span{alloc: b.Region.alloc, off: b.Region.off, n: b.Region.n, acc: b.Access})
		}
	}
	return l, spans, nil
}

// packScalar returns a's value at a carrier of size bytes, zero-extended,
// refusing values the carrier cannot hold (binding mistake 7).
func packScalar(a Arg, size int) (uint64, error) {
	switch a.kind {
	case argIndex:
		v := int64(a.val)
		if size < 8 {
			lo, hi := -int64(1)<<(size*8-1), int64(1)<<(size*8-1)-1
			if v < lo || v > hi {
				return 0, fmt.Errorf("index %d does not fit the %d-bit index carrier", v, size*8)
			}
			return uint64(v) & (1<<(size*8) - 1), nil
		}
		return uint64(v), nil
	case argOffset:
		if size < 8 && a.val>>(size*8) != 0 {
			return 0, fmt.Errorf("offset %d does not fit the %d-bit offset carrier", a.val, size*8)
		}
		return a.val, nil
	}
	return a.val, nil
}

// prepareFill checks f and appends the span it writes; the caller holds s.mu.
func (s *Session) prepareFill(f *Fill, where string, spans []span) (*fillCmd, []span, error) {
	al, err := s.region(f.Region, "fill")
	if err != nil {
		return nil, spans, fmt.Errorf("%s: %w", where, err)
	}
	if al.weight {
		return nil, spans, fmt.Errorf("%w: %s: fill of weight %v", ErrWeightWrite, where, f.Region)
	}
	if f.Region.off%4 != 0 || f.Region.n%4 != 0 {
		return nil, spans, fmt.Errorf("%w: %s: fill of %v: offset and length must be multiples of 4", ErrArgument, where, f.Region)
	}
	spans = append(spans, span{alloc: f.Region.alloc, off: f.Region.off, n: f.Region.n, acc: AccessWrite})
	return &fillCmd{Mem: al.mem, Off: f.Region.off, N: f.Region.n, Value: f.Value}, spans, nil
}

// prepare checks and packs one command of any kind.
func (s *Session) prepare(c Command, where string, spans []span) (graphNode, []span, error) {
	switch c := c.(type) {
	case Dispatch:
		l, sp, err := s.prepareDispatch(&c, where, spans)
		return graphNode{Launch: l}, sp, err
	case *Dispatch:
		if c != nil {
			l, sp, err := s.prepareDispatch(c, where, spans)
			return graphNode{Launch: l}, sp, err
		}
	case Fill:
		f, sp, err := s.prepareFill(&c, where, spans)
		return graphNode{Fill: f}, sp, err
	case *Fill:
		if c != nil {
			f, sp, err := s.prepareFill(c, where, spans)
			return graphNode{Fill: f}, sp, err
		}
	}
	return graphNode{}, spans, fmt.Errorf("%w: %s: unsupported command %T", ErrArgument, where, c)
}
