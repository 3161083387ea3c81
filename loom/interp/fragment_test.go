package interp

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// fragOperands are exact inputs for a fragment matmul: multiples of 1/2
// in [-2, 2] (exact in f16, bf16 and i8 after scaling), so every product
// and partial sum is exact in the accumulator type and the Go reference
// below is the exact answer.
type fragOperands struct {
	m, n, k int
	a, b, c []float64
}

func newFragOperands(m, n, k int, seed uint32, integers bool) fragOperands {
	o := fragOperands{m: m, n: n, k: k}
	s := seed*2654435761 + 7
	next := func() float64 {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		v := float64(int(s%9) - 4) // -4..4
		if integers {
			return v * 8 // -32..32: i8 products and sums stay exact in i32
		}
		return v / 2
	}
	for range m * k {
		o.a = append(o.a, next())
	}
	for range k * n {
		o.b = append(o.b, next())
	}
	for range m * n {
		o.c = append(o.c, next())
	}
	return o
}

// want is C + A·B, row-major m×n.
func (o fragOperands) want() []float64 {
	d := make([]float64, o.m*o.n)
	for i := range o.m {
		for j := range o.n {
			s := o.c[i*o.n+j]
			for kk := range o.k {
				s += o.a[i*o.k+kk] * o.b[kk*o.n+j]
			}
			d[i*o.n+j] = s
		}
	}
	return d
}

// encode stores xs as elements of the named type.
func encode(t testing.TB, typ string, xs []float64) []byte {
	var size int
	switch typ {
	case "i8":
		size = 1
	case "f16", "bf16":
		size = 2
	default:
		size = 4
	}
	b := make([]byte, size*len(xs))
	for i, x := range xs {
		switch typ {
		case "i8":
			b[i] = byte(int(x)) // two's complement, or u8 for 128..255
		case "f16":
			binary.LittleEndian.PutUint16(b[2*i:], uint16(fmtF16.encode(x)))
		case "bf16":
			binary.LittleEndian.PutUint16(b[2*i:], uint16(fmtBF16.encode(x)))
		case "i32":
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(x)))
		default:
			f := f32bytes([]float32{float32(x)})
			copy(b[4*i:], f)
		}
	}
	return b
}

func decode(typ string, b []byte) []float64 {
	var out []float64
	switch typ {
	case "f16", "bf16":
		m := fmtF16
		if typ == "bf16" {
			m = fmtBF16
		}
		for i := 0; i+2 <= len(b); i += 2 {
			out = append(out, m.decode(uint64(binary.LittleEndian.Uint16(b[i:]))))
		}
	case "i32":
		for _, v := range bytesI32(b) {
			out = append(out, float64(v))
		}
	default:
		for _, v := range bytesF32(b) {
			out = append(out, float64(v))
		}
	}
	return out
}

// TestFragmentMMA runs each fragment kernel of loom/testdata/fragment_mma.loom
// on exact inputs and compares with a plain Go matmul: the load, mma and
// store layouts must agree for the answer to come out right.
func TestFragmentMMA(t *testing.T) {
	m := corpus(t, "fragment_mma.loom")
	cases := []struct {
		export    string
		ab, acc   string
		m, n, k   int
		integers  bool
		lhsStored bool // fragment_splat_init: zero init, lhs stored back
		laneInit  bool // fragment_lane_ops: init read per lane, result doubled
		unsignedA bool // fragment_u8_i32: A's bytes are u8
	}{
		{"fragment_f16_f32", "f16", "f32", 32, 32, 64, false, false, false, false},
		{"fragment_bf16_f32", "bf16", "f32", 32, 32, 64, false, false, false, false},
		{"fragment_f16_f16", "f16", "f16", 32, 32, 32, false, false, false, false},
		{"fragment_i8_i32", "i8", "i32", 32, 32, 64, true, false, false, false},
		{"fragment_dense_f32", "f16", "f32", 8, 8, 4, false, false, false, false},
		{"fragment_splat_init", "f16", "f32", 16, 16, 16, false, true, false, false},
		{"fragment_lane_ops", "f16", "f32", 16, 16, 16, false, false, true, false},
		{"fragment_u8_i32", "i8", "i32", 32, 32, 32, true, false, false, true},
	}
	for _, c := range cases {
		t.Run(c.export, func(t *testing.T) {
			for _, workers := range []int{1, 3} {
				r := compileRun(t, m, c.export, Options{Workers: workers})
				o := newFragOperands(c.m, c.n, c.k, 5, c.integers)
				if c.unsignedA {
					// Bytes 128..255 read as unsigned: -32..-8 become 224..248.
					for i, v := range o.a {
						if v < 0 {
							o.a[i] = v + 256
						}
					}
				}
				if c.lhsStored {
					for i := range o.c {
						o.c[i] = 0
					}
				}
				a, b := encode(t, c.ab, o.a), encode(t, c.ab, o.b)
				d := make([]byte, len(encode(t, c.acc, o.c)))
				last := buf(encode(t, c.acc, o.c))
				if c.lhsStored {
					last = buf(make([]byte, len(a)))
					r.run(nil, buf(a), buf(b), buf(d), last)
					if got := decode(c.ab, last.Buffer); !equalF(got, o.a) {
						t.Fatalf("stored lhs fragment differs from A: %v", got[:16])
					}
				} else if c.laneInit {
					// Lane l's component e is the accumulator element the
					// subgroup layout puts there.
					lay, err := loom.NewFragmentLayout(loom.FragmentInit, 16, 16, 8, 32)
					if err != nil {
						t.Fatal(err)
					}
					payload := make([]float64, 256)
					for l := range 32 {
						for e := range 8 {
							row, col := lay.Coord(l, e)
							payload[l*8+e] = o.c[row*16+col]
						}
					}
					r.run(nil, buf(a), buf(b), buf(encode(t, "f32", payload)), buf(d))
				} else {
					r.run(nil, buf(a), buf(b), last, buf(d))
				}
				want := o.want()
				if c.laneInit {
					for i := range want {
						want[i] *= 2
					}
				}
				got := decode(c.acc, d)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("workers %d: D[%d][%d] = %v, want %v", workers, i/c.n, i%c.n, got[i], want[i])
					}
				}
			}
		})
	}
}

func equalF(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFragmentMFMA runs loom/testdata/fragment_mfma.loom (wave-64 layout,
// gfx942 target) on exact inputs against a plain Go matmul, with 32- and
// 64-lane subgroups.
func TestFragmentMFMA(t *testing.T) {
	m := corpus(t, "fragment_mfma.loom")
	for _, c := range []struct{ export, ab, acc string }{
		{"mfma_f16_f32", "f16", "f32"}, {"mfma_bf16_f32", "bf16", "f32"},
		{"mfma_f32_f32", "f32", "f32"}, {"mfma_f16_f16", "f16", "f16"},
	} {
		for _, sg := range []int{32, 64} {
			opts := Options{Workers: 2, Target: loom.Target{IndexBits: 32, OffsetBits: 64, SubgroupSize: sg}}
			r := compileRun(t, m, c.export, opts)
			o := newFragOperands(32, 32, 64, 9, false)
			d := make([]byte, len(encode(t, c.acc, o.c)))
			r.run(nil, buf(encode(t, c.ab, o.a)), buf(encode(t, c.ab, o.b)), buf(encode(t, c.acc, o.c)), buf(d))
			want, got := o.want(), decode(c.acc, d)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s, %d-lane subgroups: D[%d][%d] = %v, want %v", c.export, sg, i/32, i%32, got[i], want[i])
				}
			}
		}
	}
	// Outside a wave-64 target the same shapes have no layout.
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "fragment_mfma.loom"))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(raw), "amdgpu.target<gfx942>", "amdgpu.target<gfx1100>", 1)
	if _, err := Compile([]*loom.Module{parseSrc(t, src)}, "mfma_f16_f32", Options{}); err == nil || !strings.Contains(err.Error(), "no fragment layout for init [16, 16] in 4 components") {
		t.Errorf("gfx1100: got %v, want no layout for the wave-64 init", err)
	}
}
