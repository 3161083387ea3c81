package runtime

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// VectorLane is a Go type a vector argument's lanes may have, one per Loom
// element type: bool (i1), int8…int64 (i8…i64), int (index), uint64
// (offset), F16, BF16, float32 and float64.
type VectorLane interface {
	bool | int | int8 | int16 | int32 | int64 | uint64 | F16 | BF16 | float32 | float64
}

// vectorLanes is the value of a vector Arg: the lanes little-endian, lane
// 0 first, each at its element's natural width (8 bytes for index and
// offset, whose carrier width is the target's, 1 for i1). Nothing writes
// it after Vector made it, so Args that share one stay independent.
type vectorLanes struct {
	elem argKind
	n    int
	b    []byte
}

// laneBytes is the width at which Vector stores a lane of kind k.
func laneBytes(k argKind) int {
	switch k {
	case argI1, argI8:
		return 1
	case argI16, argF16, argBF16:
		return 2
	case argI32, argF32:
		return 4
	}
	return 8
}

// Vector passes a vector launch argument: vector<N x T> takes N lanes of
// the Go type of T (see VectorLane), in row-major order for a vector of
// several dimensions. The session checks the lane type and count against
// the kernel's parameter and packs the lanes at their carrier width (an
// index lane that does not fit a 32-bit index carrier is refused).
func Vector[T VectorLane](lanes ...T) Arg {
	v := &vectorLanes{n: len(lanes)}
	put := func(kind argKind, f func(b []byte, i int)) {
		v.elem = kind
		w := laneBytes(kind)
		v.b = make([]byte, w*len(lanes))
		for i := range lanes {
			f(v.b[i*w:], i)
		}
	}
	le := binary.LittleEndian
	switch l := any(lanes).(type) {
	case []bool:
		put(argI1, func(b []byte, i int) {
			if l[i] {
				b[0] = 1
			}
		})
	case []int8:
		put(argI8, func(b []byte, i int) { b[0] = byte(l[i]) })
	case []int16:
		put(argI16, func(b []byte, i int) { le.PutUint16(b, uint16(l[i])) })
	case []int32:
		put(argI32, func(b []byte, i int) { le.PutUint32(b, uint32(l[i])) })
	case []int64:
		put(argI64, func(b []byte, i int) { le.PutUint64(b, uint64(l[i])) })
	case []int:
		put(argIndex, func(b []byte, i int) { le.PutUint64(b, uint64(int64(l[i]))) })
	case []uint64:
		put(argOffset, func(b []byte, i int) { le.PutUint64(b, l[i]) })
	case []F16:
		put(argF16, func(b []byte, i int) { le.PutUint16(b, uint16(l[i])) })
	case []BF16:
		put(argBF16, func(b []byte, i int) { le.PutUint16(b, uint16(l[i])) })
	case []float32:
		put(argF32, func(b []byte, i int) { le.PutUint32(b, math.Float32bits(l[i])) })
	case []float64:
		put(argF64, func(b []byte, i int) { le.PutUint64(b, math.Float64bits(l[i])) })
	}
	return Arg{kind: argVector, vec: v}
}

// vectorParam is what a vector launch parameter takes: the lane kind and
// count, and the carrier width of one lane on the compiled target.
type vectorParam struct {
	elem  argKind
	n     int
	carry int
}

// vectorKind is the layout of a vector parameter of type ty on target t;
// a dynamic lane count or a lane type with no argument is refused.
func vectorKind(ty *loom.Type, t loom.Target) (vectorParam, error) {
	n := int64(1)
	for _, d := range ty.Dims {
		if d.Value != nil {
			return vectorParam{}, fmt.Errorf("launch parameters of type %s are not supported by the runtime: a vector argument needs a static lane count", ty)
		}
		n *= d.Size
	}
	if ty.Elem == nil || !ty.Elem.IsScalar() || n < 1 || n > maxVectorLanes {
		return vectorParam{}, fmt.Errorf("launch parameters of type %s are not supported by the runtime (vectors of 1 to %d scalar lanes are)", ty, maxVectorLanes)
	}
	elem, carry, err := scalarKind(ty.Elem, t)
	if err != nil {
		return vectorParam{}, fmt.Errorf("launch parameters of type %s are not supported by the runtime: %w", ty, err)
	}
	return vectorParam{elem: elem, n: int(n), carry: carry}, nil
}

// maxVectorLanes bounds a vector parameter's lanes, as the PTX backend
// does (its lanes are loaded one register each).
const maxVectorLanes = 64

// packVector is the parameter bytes of vector argument v for parameter p,
// lanes narrowed to their carrier width; ok is false when v's lane type
// or count differs from p's, or a lane does not fit its carrier.
func packVector(v *vectorLanes, p vectorParam) ([]byte, bool) {
	if v == nil || v.elem != p.elem || v.n != p.n {
		return nil, false
	}
	if laneBytes(v.elem) == p.carry {
		return v.b, true // nothing writes either
	}
	out := make([]byte, p.n*p.carry)
	for i := range p.n {
		lane := v.lane(i)
		bits, ok := scalarBits(&lane, p.carry)
		if !ok {
			return nil, false
		}
		for j := range p.carry {
			out[i*p.carry+j] = byte(bits >> (8 * j))
		}
	}
	return out, true
}

// vectorError says why packVector refused v for parameter p of type typ.
func vectorError(v *vectorLanes, p vectorParam, typ string) error {
	if v.elem != p.elem || v.n != p.n {
		return fmt.Errorf("is %s, got a vector of %d %s lanes", typ, v.n, v.elem)
	}
	for i := range v.n {
		lane := v.lane(i)
		if _, err := packScalar(&lane, p.carry); err != nil {
			return fmt.Errorf("lane %d: %w", i, err)
		}
	}
	return fmt.Errorf("%v refused without a reason (internal error)", v)
}

// lane is lane i of v as a scalar Arg.
func (v *vectorLanes) lane(i int) Arg {
	w := laneBytes(v.elem)
	var buf [8]byte
	copy(buf[:], v.b[i*w:i*w+w])
	val := binary.LittleEndian.Uint64(buf[:])
	return Arg{kind: v.elem, val: val}
}

// String renders the lanes for messages: vector<4xf32> [1 2 3 4].
func (v *vectorLanes) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "vector<%dx%s> [", v.n, v.elem)
	for i := range v.n {
		if i > 0 {
			b.WriteByte(' ')
		}
		s := v.lane(i).String()
		b.WriteString(s[strings.IndexByte(s, ' ')+1:])
	}
	b.WriteByte(']')
	return b.String()
}
