package loom

import (
	"fmt"
	"strconv"
)

// Asynchronous copies (kernel.async.*), as Loom defines them: a transfer
// op (copy, gather, and their .mask forms) starts a byte-for-byte copy and
// yields a token; kernel.async.group commits tokens, in program order, to
// the invocation's async stream; kernel.async.wait completes a group and
// every older one, leaving newer_groups younger groups outstanding. The
// wait is no barrier: other invocations see the bytes after a
// kernel.barrier that follows it.
//
// Loom's stream legality (checkAsyncStream, run for every block by Lower,
// for both backends) makes the copies unobservable before their wait: a
// group is waited in the block that commits it, with the exact count of
// younger outstanding groups, and no op of that block touches a view that
// may overlap a destination still in flight. Under that rule a copy that
// completes when it starts is indistinguishable from one that completes
// at its wait, so the shared lowering turns each transfer into element
// loads and stores (under scf.if for the .mask forms) and drops groups and
// waits; PTX keeps them native (cp.async, commit_group, wait_group).

// AsyncTransfer is one kernel.async.copy / gather op (or its .mask form),
// with its static footprint.
type AsyncTransfer struct {
	Source, Dest *Value
	// Predicate is the .mask forms' i1 operand (nil otherwise): false
	// copies nothing and touches neither view.
	Predicate *Value
	// Gather: a subgroup gather; each invocation's Source lands in its
	// lane's slot Dest[lane, …] (the leading axis is the subgroup lane).
	Gather bool
	// ToGlobal: direction workgroup_to_global (copies only).
	ToGlobal bool
	// Bytes is the static byte footprint of Source; SlotBytes that of one
	// destination slot (all of Dest for a copy), at least Bytes.
	Bytes, SlotBytes int
}

// asyncTransferOps are the transfer ops the backends run; the AMDGPU-only
// cluster and tensor-memory transfers stay unsupported.
var asyncTransferOps = map[string]bool{
	"kernel.async.copy": true, "kernel.async.copy.mask": true,
	"kernel.async.gather": true, "kernel.async.gather.mask": true,
}

// IsAsyncTransfer reports whether name is a transfer op ParseAsyncTransfer reads.
func IsAsyncTransfer(name string) bool { return asyncTransferOps[name] }

// ParseAsyncTransfer reads a transfer op and checks Loom's static rules:
// views with static byte-addressable footprints, equal for a copy; for a
// gather a destination with one more (leading, subgroup-lane) axis whose
// trailing slot holds at least the source's bytes.
func ParseAsyncTransfer(op *Op) (*AsyncTransfer, error) {
	bad := func(format string, args ...any) error {
		return &Error{Pos: op.Pos, Class: ErrInvalid, Msg: op.Name + ": " + fmt.Sprintf(format, args...)}
	}
	if !asyncTransferOps[op.Name] {
		return nil, bad("not an asynchronous transfer")
	}
	mask := op.Name == "kernel.async.copy.mask" || op.Name == "kernel.async.gather.mask"
	want := 2
	if mask {
		want = 3
	}
	if len(op.Operands) != want || len(op.Results) != 1 {
		return nil, bad("needs %d operands and one token result", want)
	}
	for _, o := range op.Operands {
		if o.Value == nil || o.Value.Type == nil {
			return nil, bad("operand %s has no known type", o.Name)
		}
	}
	tr := &AsyncTransfer{Source: op.Operands[0].Value, Dest: op.Operands[1].Value, Gather: op.Name == "kernel.async.gather" || op.Name == "kernel.async.gather.mask"}
	if mask {
		tr.Predicate = op.Operands[2].Value
		if t := tr.Predicate.Type; t.Kind != TypeInt || t.Bits != 1 {
			return nil, bad("predicate %%%s is %s, not i1", tr.Predicate.Name, t)
		}
	}
	if a := op.Attr("direction"); a != nil && a.Value.Text == "workgroup_to_global" {
		tr.ToGlobal = true
	}
	src, dst := tr.Source.Type, tr.Dest.Type
	var ok bool
	if tr.Bytes, ok = staticViewBytes(src, 0); !ok {
		return nil, bad("source %s has no static byte-addressable footprint", src)
	}
	first := 0
	if tr.Gather {
		if dst.Kind != TypeView || len(dst.Dims) != len(src.Dims)+1 {
			return nil, bad("destination %s needs one leading subgroup-lane axis more than the source %s", dst, src)
		}
		first = 1
	}
	if tr.SlotBytes, ok = staticViewBytes(dst, first); !ok {
		return nil, bad("destination %s has no static byte-addressable footprint", dst)
	}
	if tr.Gather && tr.SlotBytes < tr.Bytes {
		return nil, bad("a lane slot of %s holds %d bytes, fewer than the source's %d", dst, tr.SlotBytes, tr.Bytes)
	}
	if !tr.Gather && tr.SlotBytes != tr.Bytes {
		return nil, bad("source %s (%d bytes) and destination %s (%d bytes) differ in footprint", src, tr.Bytes, dst, tr.SlotBytes)
	}
	return tr, nil
}

// staticViewBytes is the byte count of t's axes from first on: static
// sizes times a whole-byte element.
func staticViewBytes(t *Type, first int) (int, bool) {
	if t.Kind != TypeView || t.Elem == nil || first > len(t.Dims) {
		return 0, false
	}
	e := t.Elem
	if !e.IsScalar() || (e.Kind == TypeInt && e.Bits%8 != 0 && e.Bits != 1) {
		return 0, false
	}
	n := TargetGPU.byteSizeOn(e)
	for _, d := range t.Dims[first:] {
		if d.Value != nil || d.Size < 0 {
			return 0, false
		}
		n *= int(d.Size)
	}
	return n, n >= 0
}

func init() {
	for name := range asyncTransferOps {
		lowerRules[name] = lowerAsyncTransfer
	}
	lowerRules["kernel.async.group"] = lowerAsyncMarker
	lowerRules["kernel.async.wait"] = lowerAsyncMarker
}

// lowerAsyncMarker drops a group or wait: with copies done when they start
// (see above) they order nothing more.
func lowerAsyncMarker(l *lowering, op *Op) (bool, error) { return true, nil }

// maxUnrolledCopy bounds the elements a transfer copies without a loop.
const maxUnrolledCopy = 64

// lowerAsyncTransfer rewrites a transfer into element loads and stores in
// row-major order of both views (lane slot Dest[lane, …] for a gather).
func lowerAsyncTransfer(l *lowering, op *Op) (bool, error) {
	tr, err := ParseAsyncTransfer(op)
	if err != nil {
		return true, err
	}
	src, dst := tr.Source.Type, tr.Dest.Type
	if !sameType(src.Elem, dst.Elem) {
		return true, l.errorf("the element-wise lowering copies between equal element types; %s and %s differ (only PTX copies bytes natively)", src.Elem, dst.Elem)
	}
	idx := &Type{Kind: TypeIndex, Name: "index"}
	n := 1
	for _, d := range src.Dims {
		n *= int(d.Size)
	}
	dstDims := dst.Dims
	var lane *Value
	var saved []*Op
	if tr.Predicate != nil {
		saved, l.out = l.out, nil
	}
	if tr.Gather {
		lane = l.emit("kernel.subgroup.lane.id", "", nil, []*Type{idx}, nil, idx)
		dstDims = dst.Dims[1:]
	}
	elem := src.Elem
	copyOne := func(k func(dims []Dim) []*Value) {
		v := l.emit("view.load", "", append([]*Value{tr.Source}, k(src.Dims)...), []*Type{src}, []*Type{elem}, elem)
		ix := k(dstDims)
		if lane != nil {
			ix = append([]*Value{lane}, ix...)
		}
		l.emit("view.store", "", append([]*Value{v, tr.Dest}, ix...), []*Type{elem, dst}, nil, nil)
	}
	if n <= maxUnrolledCopy {
		for e := 0; e < n; e++ {
			copyOne(func(dims []Dim) []*Value {
				ix := make([]*Value, len(dims))
				r := int64(e)
				for a := len(dims) - 1; a >= 0; a-- {
					ix[a] = l.intConst(idx, r%dims[a].Size)
					r /= dims[a].Size
				}
				return ix
			})
		}
	} else {
		// scf.for %e = [0 to n step 1] { coordinates of e by div/rem; copy }
		lo, hi, one := l.intConst(idx, 0), l.intConst(idx, int64(n)), l.intConst(idx, 1)
		outer := l.out
		l.out = nil
		l.n++
		body := &Region{Pos: op.Pos, End: op.End}
		e := &Value{Name: "lower.ce" + strconv.Itoa(l.n), Type: idx, Pos: op.Pos, Owner: body}
		body.Args = []*Value{e}
		copyOne(func(dims []Dim) []*Value {
			ix := make([]*Value, len(dims))
			r := e
			for a := len(dims) - 1; a >= 0; a-- {
				size := l.intConst(idx, dims[a].Size)
				ix[a] = l.emit("index.rem", "", []*Value{r, size}, []*Type{idx}, nil, idx)
				if a > 0 {
					r = l.emit("index.div", "", []*Value{r, size}, []*Type{idx}, nil, idx)
				}
			}
			return ix
		})
		body.Ops = append(l.out, &Op{Pos: op.Pos, End: op.End, Name: "scf.yield"})
		l.out = outer
		forOp := &Op{Pos: op.Pos, End: op.End, Name: "scf.for", Regions: []*Region{body}}
		for _, a := range []*Value{lo, hi, one} {
			forOp.Operands = append(forOp.Operands, &Operand{Pos: op.Pos, Name: a.Name, Value: a})
		}
		l.out = append(l.out, forOp)
	}
	if tr.Predicate != nil {
		then := &Region{Pos: op.Pos, End: op.End, Ops: l.out}
		l.out = append(saved, &Op{Pos: op.Pos, End: op.End, Name: "scf.if", Regions: []*Region{then},
			Operands: []*Operand{{Pos: op.Pos, Name: tr.Predicate.Name, Value: tr.Predicate}}})
	}
	return true, nil
}
