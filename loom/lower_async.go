package loom

import (
	"fmt"
	"strconv"
	"strings"
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
	n := TargetGPU.ByteSizeOn(e)
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

// lowerAsyncTransfer rewrites a transfer into loads and stores (under
// scf.if for the .mask forms): element by element between equal element
// types, byte by byte between different ones.
func lowerAsyncTransfer(l *lowering, op *Op) (bool, error) {
	tr, err := ParseAsyncTransfer(op)
	if err != nil {
		return true, err
	}
	var saved []*Op
	if tr.Predicate != nil {
		saved, l.out = l.out, nil
	}
	if sameType(tr.Source.Type.Elem, tr.Dest.Type.Elem) {
		l.elemCopy(tr)
	} else if err := l.byteCopy(tr); err != nil {
		return true, err
	}
	if tr.Predicate != nil {
		then := &Region{Pos: op.Pos, End: op.End, Ops: l.out}
		l.out = append(saved, &Op{Pos: op.Pos, End: op.End, Name: "scf.if", Regions: []*Region{then},
			Operands: []*Operand{{Pos: op.Pos, Name: tr.Predicate.Name, Value: tr.Predicate}}})
	}
	return true, nil
}

var lowerIndex = &Type{Kind: TypeIndex, Name: "index"}

// constCoords are the row-major coordinates of element k in dims.
func (l *lowering) constCoords(k int, dims []Dim) []*Value {
	ix := make([]*Value, len(dims))
	for a := len(dims) - 1; a >= 0; a-- {
		ix[a] = l.intConst(lowerIndex, int64(k)%dims[a].Size)
		k /= int(dims[a].Size)
	}
	return ix
}

// destLane is a gather's lane index (its destination's leading axis)
// and the slot's dims, or nothing and all of a copy's destination dims.
func (l *lowering) destLane(tr *AsyncTransfer) (lane []*Value, dims []Dim) {
	if !tr.Gather {
		return nil, tr.Dest.Type.Dims
	}
	id := l.emit("kernel.subgroup.lane.id", "", nil, []*Type{lowerIndex}, nil, lowerIndex)
	return []*Value{id}, tr.Dest.Type.Dims[1:]
}

// elemCopy copies element k of the source to element k of the
// destination (slot), in row-major order of both: unrolled up to
// maxUnrolledCopy elements, else in an scf.for.
func (l *lowering) elemCopy(tr *AsyncTransfer) {
	src, dst := tr.Source.Type, tr.Dest.Type
	n := 1
	for _, d := range src.Dims {
		n *= int(d.Size)
	}
	lane, dstDims := l.destLane(tr)
	copyOne := func(coords func(dims []Dim) []*Value) {
		v := l.emit("view.load", "", append([]*Value{tr.Source}, coords(src.Dims)...), []*Type{src}, []*Type{src.Elem}, src.Elem)
		ix := append(append([]*Value(nil), lane...), coords(dstDims)...)
		l.emit("view.store", "", append([]*Value{v, tr.Dest}, ix...), []*Type{src.Elem, dst}, nil, nil)
	}
	if n <= maxUnrolledCopy {
		for e := 0; e < n; e++ {
			copyOne(func(dims []Dim) []*Value { return l.constCoords(e, dims) })
		}
		return
	}
	// scf.for %e = [0 to n step 1] { coordinates of e by div/rem; copy }
	pos, end := l.cur.Pos, l.cur.End
	lo, hi, one := l.intConst(lowerIndex, 0), l.intConst(lowerIndex, int64(n)), l.intConst(lowerIndex, 1)
	outer := l.out
	l.out = nil
	l.n++
	body := &Region{Pos: pos, End: end}
	e := &Value{Name: "lower.ce" + strconv.Itoa(l.n), Type: lowerIndex, Pos: pos, Owner: body}
	body.Args = []*Value{e}
	copyOne(func(dims []Dim) []*Value {
		ix := make([]*Value, len(dims))
		r := e
		for a := len(dims) - 1; a >= 0; a-- {
			size := l.intConst(lowerIndex, dims[a].Size)
			ix[a] = l.emit("index.rem", "", []*Value{r, size}, []*Type{lowerIndex}, nil, lowerIndex)
			if a > 0 {
				r = l.emit("index.div", "", []*Value{r, size}, []*Type{lowerIndex}, nil, lowerIndex)
			}
		}
		return ix
	})
	body.Ops = append(l.out, &Op{Pos: pos, End: end, Name: "scf.yield"})
	l.out = outer
	forOp := &Op{Pos: pos, End: end, Name: "scf.for", Regions: []*Region{body}}
	for _, a := range []*Value{lo, hi, one} {
		forOp.Operands = append(forOp.Operands, &Operand{Pos: pos, Name: a.Name, Value: a})
	}
	l.out = append(l.out, forOp)
}

// maxByteCopy bounds the bytes a copy between different element types
// moves (unrolled, byte by byte).
const maxByteCopy = 64

// byteCopy lowers a transfer between views of different element types:
// each source element (row-major) is read as its little-endian bytes
// (floats through a same-width bitcast), and each destination element is
// assembled from the next bytes, as the byte-for-byte copy Loom defines.
func (l *lowering) byteCopy(tr *AsyncTransfer) error {
	src, dst := tr.Source.Type, tr.Dest.Type
	for _, e := range []*Type{src.Elem, dst.Elem} {
		if (e.Kind != TypeInt && e.Kind != TypeFloat) || e.Bits%8 != 0 || e.Bits > 64 || strings.HasPrefix(e.Name, "f8") {
			return l.errorf("a copy between %s and %s elements (bytes move between integer and f16/bf16/f32/f64 elements of whole bytes)", src.Elem, dst.Elem)
		}
	}
	ss, ds := src.Elem.Bits/8, dst.Elem.Bits/8
	if tr.Bytes > maxByteCopy || tr.Bytes%ds != 0 {
		return l.errorf("a copy of %d bytes between %s and %s elements (at most %d bytes, whole destination elements)", tr.Bytes, src.Elem, dst.Elem, maxByteCopy)
	}
	var bytes []*Value
	for k := 0; k < tr.Bytes/ss; k++ {
		v := l.emit("view.load", "", append([]*Value{tr.Source}, l.constCoords(k, src.Dims)...), []*Type{src}, []*Type{src.Elem}, src.Elem)
		w := l.toIntLanes(v)
		for b := 0; b < ss; b++ {
			x := w
			if b > 0 {
				x = l.bin("shrui", w, l.intConst(w.Type, int64(8*b)))
			}
			bytes = append(bytes, l.resizeInt(x, 8, false))
		}
	}
	lane, dims := l.destLane(tr)
	it := typeOfBits(8 * ds)
	for j := 0; j < tr.Bytes/ds; j++ {
		acc := l.resizeInt(bytes[j*ds], 8*ds, false)
		for b := 1; b < ds; b++ {
			x := l.resizeInt(bytes[j*ds+b], 8*ds, false)
			acc = l.bin("ori", acc, l.bin("shli", x, l.intConst(it, int64(8*b))))
		}
		if dst.Elem.Kind == TypeFloat {
			acc = l.cast("bitcast", acc, dst.Elem)
		}
		ix := append(append([]*Value(nil), lane...), l.constCoords(j, dims)...)
		l.emit("view.store", "", append([]*Value{acc, tr.Dest}, ix...), []*Type{dst.Elem, dst}, nil, nil)
	}
	return nil
}
