package ptx

import (
	"math"

	"github.com/loomgen/loomgen/loom"
)

// class is a PTX register class; each gets its own numbered family.
type class uint8

const (
	cPred class = iota // i1
	cR                 // index, i8, i16, i32 (small integers sign-extended)
	cRd                // offset, i64, addresses
	cH                 // f16, bf16 bit patterns
	cF                 // f32
	cFd                // f64
	numClasses
)

var (
	classPrefix = [numClasses]string{"%p", "%r", "%rd", "%h", "%f", "%fd"}
	classDecl   = [numClasses]string{"pred", "b32", "b64", "b16", "f32", "f64"}
)

// Shared types for values the backend creates itself.
var (
	indexType  = &loom.Type{Kind: loom.TypeIndex, Name: "index"}
	offsetType = &loom.Type{Kind: loom.TypeOffset, Name: "offset"}
	i1Type     = &loom.Type{Kind: loom.TypeInt, Name: "i1", Bits: 1}
	i32Type    = &loom.Type{Kind: loom.TypeInt, Name: "i32", Bits: 32}
	f32Type    = &loom.Type{Kind: loom.TypeFloat, Name: "f32", Bits: 32}
)

// classOf is the register class of a scalar type; callers check IsScalar.
func classOf(t *loom.Type) class {
	switch t.Kind {
	case loom.TypeIndex:
		return cR
	case loom.TypeOffset:
		return cRd
	case loom.TypeInt:
		switch {
		case t.Bits == 1:
			return cPred
		case t.Bits <= 32:
			return cR
		}
		return cRd
	case loom.TypeFloat:
		switch t.Name {
		case "f32":
			return cF
		case "f64":
			return cFd
		}
		return cH
	}
	return cRd // buffers and views are addresses
}

// supportedScalar reports whether values of t can live in registers here.
func supportedScalar(t *loom.Type) bool {
	if t == nil || !t.IsScalar() {
		return false
	}
	if t.Kind == loom.TypeFloat {
		switch t.Name {
		case "f16", "bf16", "f32", "f64":
			return true
		}
		return false
	}
	return true
}

// intBits is the carrier width of an integer-like type.
func intBits(t *loom.Type) int {
	switch t.Kind {
	case loom.TypeIndex:
		return 32
	case loom.TypeOffset:
		return 64
	}
	return t.Bits
}

// isFloat reports whether t is a float type.
func isFloat(t *loom.Type) bool { return t != nil && t.Kind == loom.TypeFloat }

// isHalf reports whether t is stored in a 16-bit float register.
func isHalf(t *loom.Type) bool { return isFloat(t) && (t.Name == "f16" || t.Name == "bf16") }

// carrierBytes is the size of a scalar parameter or memory element: index
// and offset at the GPU carriers (32 and 64 bits).
func carrierBytes(t *loom.Type) int { return loom.TargetGPU.ByteSizeOn(t) }

// paramType is the .param type of a scalar parameter.
func paramType(t *loom.Type) string {
	switch t.Kind {
	case loom.TypeInt:
		if t.Bits <= 8 {
			return "u8"
		}
	case loom.TypeFloat:
		if isHalf(t) {
			return "b16"
		}
	}
	return ldType(t)
}

// ldType is the type suffix that loads or stores one element of t into or
// from its register (sign-extending small integers).
func ldType(t *loom.Type) string {
	switch t.Kind {
	case loom.TypeIndex:
		return "s32"
	case loom.TypeOffset:
		return "u64"
	case loom.TypeInt:
		switch t.Bits {
		case 1:
			return "u8"
		case 8:
			return "s8"
		case 16:
			return "s16"
		case 32:
			return "s32"
		}
		return "s64"
	case loom.TypeFloat:
		switch t.Name {
		case "f32":
			return "f32"
		case "f64":
			return "f64"
		}
		if isF8(t) {
			return "u8" // the byte, in a 16-bit register
		}
		return "b16"
	}
	return "u64"
}

// stType is the store type of one element of t.
func stType(t *loom.Type) string {
	switch t.Kind {
	case loom.TypeInt:
		switch t.Bits {
		case 1, 8:
			return "u8"
		case 16:
			return "u16"
		}
	}
	return ldType(t)
}

// sType is the signed arithmetic suffix of an integer type (s32 or s64).
func sType(t *loom.Type) string {
	if classOf(t) == cRd {
		return "s64"
	}
	return "s32"
}

// uType is the unsigned arithmetic suffix (u32 or u64).
func uType(t *loom.Type) string {
	if classOf(t) == cRd {
		return "u64"
	}
	return "u32"
}

// bType is the untyped suffix (b32 or b64).
func bType(t *loom.Type) string {
	if classOf(t) == cRd {
		return "b64"
	}
	return "b32"
}

// fType is the arithmetic suffix of a float type as computed: f16 and bf16
// compute in f32.
func fType(t *loom.Type) string {
	if t.Name == "f64" {
		return "f64"
	}
	return "f32"
}

// wrapInt normalises v to the value an iN register holds (sign-extended).
func wrapInt(v int64, bits int) int64 {
	if bits >= 64 || bits <= 0 {
		return v
	}
	s := 64 - uint(bits)
	return v << s >> s
}

// constInt materialises an integer constant of type t.
func (e *emitter) constInt(t *loom.Type, v int64) *val {
	out := e.newVal(t)
	out.known = true
	switch classOf(t) {
	case cPred:
		out.ci = v & 1
		r := e.newReg(cR)
		e.ins("mov.b32 %s, %d", r, v&1)
		e.ins("setp.ne.b32 %s, %s, 0", out.reg, r)
	case cR:
		if t.Kind == loom.TypeInt {
			v = wrapInt(v, t.Bits)
		} else {
			v = int64(int32(v))
		}
		out.ci = v
		e.ins("mov.b32 %s, %d", out.reg, v)
	case cRd:
		out.ci = v
		e.ins("mov.b64 %s, %d", out.reg, v)
	default:
		return e.constFloat(t, float64(v))
	}
	return out
}

// constFloat materialises a float constant of type t.
func (e *emitter) constFloat(t *loom.Type, f float64) *val {
	out := e.newVal(t)
	switch classOf(t) {
	case cF:
		e.ins("mov.f32 %s, 0f%08X", out.reg, math.Float32bits(float32(f)))
	case cFd:
		e.ins("mov.f64 %s, 0d%016X", out.reg, math.Float64bits(f))
	case cH:
		e.ins("mov.b16 %s, 0x%04X", out.reg, halfBits(t, f))
	default:
		return e.constInt(t, int64(f))
	}
	return out
}

// halfBits rounds f to the nearest f16 or bf16 bits (ties to even).
var halfBits = loom.HalfBits

// mov copies src into a fresh register of the same class.
func (e *emitter) mov(dst, src *val) {
	c := classOf(dst.t)
	if c == cPred {
		e.ins("mov.pred %s, %s", dst.reg, src.reg)
		return
	}
	e.ins("mov.%s %s, %s", movType(c), dst.reg, src.reg)
}

// movType is the mov suffix of a register class.
func movType(c class) string {
	switch c {
	case cPred:
		return "pred"
	case cH:
		return "b16"
	case cF:
		return "f32"
	case cFd:
		return "f64"
	case cRd:
		return "b64"
	}
	return "b32"
}

// scalarOK refuses values of types the backend cannot hold.
func scalarOK(op *loom.Op, t *loom.Type) error {
	if !supportedScalar(t) {
		return unsupported(op, "values of type %s", typeName(t))
	}
	return nil
}

func typeName(t *loom.Type) string {
	if t == nil {
		return "<untyped>"
	}
	return t.String()
}

// sameKind reports whether two types share a register class and width.
func sameKind(a, b *loom.Type) bool {
	return a != nil && b != nil && classOf(a) == classOf(b) && a.Kind == b.Kind && a.Bits == b.Bits && a.Name == b.Name
}
