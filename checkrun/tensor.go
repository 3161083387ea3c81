package checkrun

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/loomgen/loomgen/loom"
	loomrt "github.com/loomgen/loomgen/runtime"
)

// tensor is a case's shaped value: dense row-major elements in host bytes.
// A check.tensor.view shares its root's storage, so a kernel writing
// through one is seen through the other.
type tensor struct {
	elem  *loom.Type
	shape []int64
	data  []byte  // this tensor's bytes, a window of root.data
	root  *tensor // the storage owner (itself for a root)
	off   int     // byte offset of data in root.data
}

// elemSize is the storage size of a tensor element type, or an error for
// the types the runner does not materialize.
func elemSize(t *loom.Type) (int, error) {
	switch t.Kind {
	case loom.TypeInt:
		return t.ByteSize(), nil
	case loom.TypeFloat:
		switch t.Name {
		case "f16", "bf16", "f32", "f64":
			return t.ByteSize(), nil
		}
	}
	return 0, fmt.Errorf("tensors of %s are not supported by loomgen's check runner", t)
}

func newTensor(elem *loom.Type, shape []int64) (*tensor, error) {
	es, err := elemSize(elem)
	if err != nil {
		return nil, err
	}
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension %d", d)
		}
		n *= d
		if n > 1<<31 {
			return nil, fmt.Errorf("tensor of shape %v is too large", shape)
		}
	}
	t := &tensor{elem: elem, shape: shape, data: make([]byte, n*int64(es))}
	t.root = t
	return t, nil
}

func (t *tensor) count() int { return len(t.data) / max(t.elem.ByteSize(), 1) }

func (t *tensor) isFloat() bool { return t.elem.Kind == loom.TypeFloat }

// typeString spells the tensor's concrete type, e.g. tensor<4x8xf32>.
func (t *tensor) typeString() string {
	s := "tensor<"
	for _, d := range t.shape {
		s += fmt.Sprintf("%dx", d)
	}
	return s + t.elem.Name + ">"
}

// bits returns element i's stored bits.
func (t *tensor) bits(i int) uint64 {
	es := t.elem.ByteSize()
	b := t.data[i*es : i*es+es]
	switch es {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func (t *tensor) setBits(i int, v uint64) {
	es := t.elem.ByteSize()
	b := t.data[i*es : i*es+es]
	switch es {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// float returns element i of a float tensor.
func (t *tensor) float(i int) float64 { return floatOf(t.elem, t.bits(i)) }

// int returns element i of an integer tensor, sign-extended (i1 as 0/1).
func (t *tensor) int(i int) int64 {
	b, n := t.bits(i), t.elem.Bits
	if n == 1 {
		return int64(b & 1)
	}
	if n < 64 {
		return int64(b<<(64-n)) >> (64 - n)
	}
	return int64(b)
}

func (t *tensor) setFloat(i int, x float64) { t.setBits(i, floatBits(t.elem, x)) }

func (t *tensor) setInt(i int, x int64) { t.setBits(i, uint64(x)) }

func floatOf(elem *loom.Type, b uint64) float64 {
	switch elem.Name {
	case "f16":
		return float64(loomrt.F16(b).Float32())
	case "bf16":
		return float64(loomrt.BF16(b).Float32())
	case "f32":
		return float64(math.Float32frombits(uint32(b)))
	}
	return math.Float64frombits(b)
}

func floatBits(elem *loom.Type, x float64) uint64 {
	switch elem.Name {
	case "f16":
		return uint64(loomrt.F16From(float32(x)))
	case "bf16":
		return uint64(loomrt.BF16From(float32(x)))
	case "f32":
		return uint64(math.Float32bits(float32(x)))
	}
	return math.Float64bits(x)
}

// fitsInt reports whether v is representable in an n-bit integer read as
// signed or as unsigned (Loom's integer types carry no signedness).
func fitsInt(v int64, n int) bool {
	if n >= 64 {
		return true
	}
	return v >= -(1<<(n-1)) && v < 1<<n
}

// elemString formats element i for messages.
func (t *tensor) elemString(i int) string {
	if t.isFloat() {
		return fmt.Sprint(t.float(i))
	}
	return fmt.Sprint(t.int(i))
}

// index formats the coordinates of linear element i.
func (t *tensor) index(i int) string {
	if len(t.shape) <= 1 {
		return fmt.Sprint(i)
	}
	co := make([]int64, len(t.shape))
	r := int64(i)
	for k := len(t.shape) - 1; k >= 0; k-- {
		co[k] = r % t.shape[k]
		r /= t.shape[k]
	}
	return fmt.Sprint(co)
}
