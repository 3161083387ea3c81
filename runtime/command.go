package runtime

import (
	"fmt"
	"math"
)

// Kernel is a handle to a kernel compiled by one session. The zero Kernel is
// invalid.
type Kernel struct {
	sess uint64
	id   int32
}

// IsZero reports whether k is the zero Kernel.
func (k Kernel) IsZero() bool { return k.sess == 0 }

// argKind is what an Arg carries; scalar kinds name the Loom type.
type argKind uint8

const (
	argNone argKind = iota
	argBuffer
	argIndex
	argOffset
	argI1
	argI8
	argI16
	argI32
	argI64
	argF16
	argBF16
	argF32
	argF64
	argVector // lanes in Arg.vec
)

var argKindNames = [...]string{
	argNone: "nothing", argBuffer: "buffer", argIndex: "index", argOffset: "offset",
	argI1: "i1", argI8: "i8", argI16: "i16", argI32: "i32", argI64: "i64",
	argF16: "f16", argBF16: "bf16", argF32: "f32", argF64: "f64", argVector: "vector",
}

func (k argKind) String() string {
	if int(k) < len(argKindNames) {
		return argKindNames[k]
	}
	return fmt.Sprintf("arg(%d)", uint8(k))
}

// Arg is one launch argument of a Dispatch: a buffer binding, a scalar
// tagged with its Loom type, or a vector (Vector). Scalars keep their full value until the session
// packs them at the compiled kernel's carrier widths, so an index that does
// not fit the 32-bit carrier is an error rather than a silent truncation.
type Arg struct {
	kind    argKind
	binding Binding
	val     uint64 // integers: two's complement; floats: their bits
	vec     *vectorLanes
}

// Buffer passes a bound region.
func Buffer(b Binding) Arg { return Arg{kind: argBuffer, binding: b} }

// Index passes an index scalar.
func Index(v int) Arg { return Arg{kind: argIndex, val: uint64(int64(v))} }

// Offset passes an offset scalar.
func Offset(v uint64) Arg { return Arg{kind: argOffset, val: v} }

// I1 passes an i1 scalar.
func I1(v bool) Arg {
	if v {
		return Arg{kind: argI1, val: 1}
	}
	return Arg{kind: argI1}
}

// I8 passes an i8 scalar.
func I8(v int8) Arg { return Arg{kind: argI8, val: uint64(uint8(v))} }

// I16 passes an i16 scalar.
func I16(v int16) Arg { return Arg{kind: argI16, val: uint64(uint16(v))} }

// I32 passes an i32 scalar.
func I32(v int32) Arg { return Arg{kind: argI32, val: uint64(uint32(v))} }

// I64 passes an i64 scalar.
func I64(v int64) Arg { return Arg{kind: argI64, val: uint64(v)} }

// F16Arg passes an f16 scalar.
func F16Arg(v F16) Arg { return Arg{kind: argF16, val: uint64(v)} }

// BF16Arg passes a bf16 scalar.
func BF16Arg(v BF16) Arg { return Arg{kind: argBF16, val: uint64(v)} }

// F32 passes an f32 scalar.
func F32(v float32) Arg { return Arg{kind: argF32, val: uint64(math.Float32bits(v))} }

// F64 passes an f64 scalar.
func F64(v float64) Arg { return Arg{kind: argF64, val: math.Float64bits(v)} }

// IsBuffer reports whether the argument is a buffer binding.
func (a Arg) IsBuffer() bool { return a.kind == argBuffer }

// Binding returns the buffer binding; ok is false for scalars.
func (a Arg) Binding() (b Binding, ok bool) { return a.binding, a.kind == argBuffer }

// Type is the Loom spelling of the argument's type ("buffer", "index",
// "f32", "vector<4xf32>", …).
func (a Arg) Type() string {
	if a.kind == argVector && a.vec != nil {
		return fmt.Sprintf("vector<%dx%s>", a.vec.n, a.vec.elem)
	}
	return a.kind.String()
}

// String renders the argument for messages.
func (a Arg) String() string {
	switch a.kind {
	case argBuffer:
		return a.binding.Access.String() + " " + a.binding.Region.String()
	case argIndex, argI64:
		return fmt.Sprintf("%s %d", a.kind, int64(a.val))
	case argI32:
		return fmt.Sprintf("i32 %d", int32(a.val))
	case argI16:
		return fmt.Sprintf("i16 %d", int16(a.val))
	case argI8:
		return fmt.Sprintf("i8 %d", int8(a.val))
	case argI1:
		return fmt.Sprintf("i1 %t", a.val != 0)
	case argOffset:
		return fmt.Sprintf("offset %d", a.val)
	case argF16:
		return fmt.Sprintf("f16 %g", F16(a.val).Float32())
	case argBF16:
		return fmt.Sprintf("bf16 %g", BF16(a.val).Float32())
	case argF32:
		return fmt.Sprintf("f32 %g", math.Float32frombits(uint32(a.val)))
	case argF64:
		return fmt.Sprintf("f64 %g", math.Float64frombits(a.val))
	case argVector:
		if a.vec != nil {
			return a.vec.String()
		}
	}
	return a.kind.String()
}

// Command is one recordable step: a Dispatch or a Fill.
type Command interface{ isCommand() }

// Fill sets every 4-byte word of Region to Value (little-endian). The
// region's offset and length must be multiples of 4, so a fill never tears a
// word the way a byte pattern would for f32 data.
type Fill struct {
	Region Region
	Value  uint32
}

func (Fill) isCommand() {}
