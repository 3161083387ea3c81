package bench

import (
	"embed"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/loomgen/loomgen/internal/le"
	"github.com/loomgen/loomgen/loom"
)

//go:embed kernels/*.loom
var kernelFS embed.FS

// NativeFS holds the CUDA sources of the nvcc and cuBLAS sides: the .cu
// files of the nvcc side (NvccSources), the header they share, and
// cublas.c.
//
//go:embed native/kernels.cu native/attention.cu native/entry.cuh native/cublas.c
var NativeFS embed.FS

// NvccSources are the nvcc side's files in native/, each built to PTX
// and loaded on its own, so that one that does not build costs only its
// own kernels' comparisons.
var NvccSources = []string{"kernels.cu", "attention.cu"}

// parseKernel parses one embedded Loom file.
func parseKernel(file string) (*loom.Module, error) {
	src, err := kernelFS.ReadFile("kernels/" + file)
	if err != nil {
		return nil, err
	}
	return loom.ParseFile(file, src)
}

// Arg is one launch argument of an instance: a scalar's bits, or a buffer
// (input bytes, or the byte length of an output when Out is set).
type Arg struct {
	Bits   uint64
	Buffer []byte
	Out    int
	// Scalar marks Bits as the argument; otherwise it is a buffer.
	Scalar bool
}

// Instance is a kernel at one workload with its inputs, a check of its
// output against a reference, and the work it does.
type Instance struct {
	File, Export string
	Shape        string
	Workload     []int64
	Args         []Arg
	// Check compares the output buffer (the first Out argument) with the
	// reference and returns the largest error in the check's own scale.
	Check func(out []byte) (float64, error)
	// Bytes and Flops are the DRAM traffic and arithmetic of one launch.
	Bytes, Flops float64
	// Weights names the argument that holds read-only weights: the GPU
	// suite rotates through copies of it so that the working set of
	// consecutive launches exceeds the L2 cache, as a model's layers do.
	Weights []int
	// CheckWhat says what the reference is; CheckNote, set by Check,
	// adds what the check measured besides (reported once).
	CheckWhat, CheckNote string
}

func scalar(v uint64) Arg  { return Arg{Bits: v, Scalar: true} }
func idx(v int) Arg        { return scalar(uint64(uint32(int32(v)))) }
func f32arg(v float32) Arg { return scalar(uint64(math.Float32bits(v))) }
func in(b []byte) Arg      { return Arg{Buffer: b} }
func out(n int) Arg        { return Arg{Out: n} }

// f32le and f32s convert inputs and outputs (package le).
var f32le, f32s = le.F32Bytes, le.BytesF32

// rng is a small deterministic generator (xorshift).
type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*r = rng(x)
	return x
}

// uniform returns n values in [lo, lo+span) on a grid of 2^-10, so
// products of two are exact in f32.
func uniform(n int, seed uint64, lo, span float32) []float32 {
	r := rng(seed*0x9E3779B97F4A7C15 + 1)
	v := make([]float32, n)
	steps := uint64(span * 1024)
	for i := range v {
		v[i] = lo + float32(r.next()%steps)/1024
	}
	return v
}

// closeTo checks got against want element by element with a tolerance
// per element, reporting the largest error in tolerance units.
func closeTo(what string, got []float32, want []float64, tol func(i int) float64) (float64, error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("%s: %d outputs, want %d", what, len(got), len(want))
	}
	worst := 0.0
	for i, g := range got {
		e := math.Abs(float64(g)-want[i]) / tol(i)
		if !(e <= 1) {
			return 0, fmt.Errorf("%s: element %d is %g, reference %g (tolerance %.3g)", what, i, g, want[i], tol(i))
		}
		worst = max(worst, e)
	}
	return worst, nil
}

// SGEMM is C = A·B at m×n×k with inputs in [-2, 2); the check compares
// every stride-th element with a float64 sum, relative to Σ|a·b|.
func SGEMM(m, n, k, stride int) *Instance {
	a, b := uniform(m*k, 1, -2, 4), uniform(k*n, 2, -2, 4)
	return &Instance{
		File: "sgemm.loom", Export: "sgemm_f32", Shape: fmt.Sprintf("%dx%dx%d", m, n, k),
		Workload:  []int64{int64(m), int64(n), int64(k)},
		Args:      []Arg{idx(m), idx(n), idx(k), in(f32le(a)), in(f32le(b)), out(4 * m * n)},
		Flops:     2 * float64(m) * float64(n) * float64(k),
		Bytes:     4 * float64(m*k+k*n+m*n),
		CheckWhat: fmt.Sprintf("float64 dot products on every %dth element, error ≤ 2e-5·Σ|a·b|", stride),
		Check: func(o []byte) (float64, error) {
			c := f32s(o)
			worst := 0.0
			for i := 0; i < m*n; i += stride {
				r, col := i/n, i%n
				var sum, mag float64
				for e := range k {
					p := float64(a[r*k+e]) * float64(b[e*n+col])
					sum += p
					mag += math.Abs(p)
				}
				err := math.Abs(float64(c[i])-sum) / (2e-5 * max(mag, 1e-30))
				if !(err <= 1) {
					return 0, fmt.Errorf("C[%d][%d] = %g, reference %g", r, col, c[i], sum)
				}
				worst = max(worst, err)
			}
			return worst, nil
		},
	}
}

// RMSNorm is y = x·w/rms(x) over rows×cols.
func RMSNorm(rows, cols int) *Instance {
	x, w := uniform(rows*cols, 3, -4, 8), uniform(cols, 4, 0.5, 1)
	const eps = 1e-5
	var want []float64
	return &Instance{
		File: "rmsnorm.loom", Export: "rmsnorm_f32", Shape: fmt.Sprintf("%dx%d", rows, cols),
		Workload:  []int64{int64(rows), int64(cols)},
		Args:      []Arg{idx(rows), idx(cols), f32arg(eps), in(f32le(x)), in(f32le(w)), out(4 * rows * cols)},
		Bytes:     float64(8*rows*cols + 4*cols),
		CheckWhat: "float64 per element, error ≤ 4e-6·(|y|+1e-3)",
		Check: func(o []byte) (float64, error) {
			if want != nil {
				return closeTo("rmsnorm", f32s(o), want, func(i int) float64 { return 4e-6 * (math.Abs(want[i]) + 1e-3) })
			}
			want = make([]float64, rows*cols)
			for r := range rows {
				var ss float64
				for c := range cols {
					v := float64(x[r*cols+c])
					ss += v * v
				}
				inv := 1 / math.Sqrt(ss/float64(cols)+eps)
				for c := range cols {
					want[r*cols+c] = float64(x[r*cols+c]) * inv * float64(w[c])
				}
			}
			return closeTo("rmsnorm", f32s(o), want, func(i int) float64 { return 4e-6 * (math.Abs(want[i]) + 1e-3) })
		},
	}
}

// Softmax is the row softmax over rows×cols of inputs in [-8, 8), by the
// kernel exported as export (softmax_f32, softmax_f32_loop or
// softmax_f32_back).
func Softmax(export string, rows, cols int) *Instance {
	x := uniform(rows*cols, 5, -8, 16)
	var want []float64
	return &Instance{
		File: "softmax.loom", Export: export, Shape: fmt.Sprintf("%dx%d", rows, cols),
		Workload:  []int64{int64(rows), int64(cols)},
		Args:      []Arg{idx(rows), idx(cols), in(f32le(x)), out(4 * rows * cols)},
		Bytes:     float64(8 * rows * cols),
		CheckWhat: "float64 per element, error ≤ 1e-5·|y| + 1e-12",
		Check: func(o []byte) (float64, error) {
			if want != nil {
				return closeTo("softmax", f32s(o), want, func(i int) float64 { return 1e-5*want[i] + 1e-12 })
			}
			want = make([]float64, rows*cols)
			for r := range rows {
				row := x[r*cols : (r+1)*cols]
				mx := math.Inf(-1)
				for _, v := range row {
					mx = max(mx, float64(v))
				}
				var s float64
				for _, v := range row {
					s += math.Exp(float64(v) - mx)
				}
				for c, v := range row {
					want[r*cols+c] = math.Exp(float64(v)-mx) / s
				}
			}
			return closeTo("softmax", f32s(o), want, func(i int) float64 { return 1e-5*want[i] + 1e-12 })
		},
	}
}

// RoPE rotates tokens×heads×128 values by per-token angle tables.
func RoPE(tokens, heads int) *Instance {
	x := uniform(tokens*heads*128, 6, -4, 8)
	cs, sn := make([]float32, tokens*64), make([]float32, tokens*64)
	for t := range tokens {
		for i := range 64 {
			th := float64(t) * math.Pow(10000, -float64(2*i)/128)
			cs[t*64+i], sn[t*64+i] = float32(math.Cos(th)), float32(math.Sin(th))
		}
	}
	return &Instance{
		File: "rope.loom", Export: "rope_f32", Shape: fmt.Sprintf("%dx%dx128", tokens, heads),
		Workload:  []int64{int64(tokens), int64(heads)},
		Args:      []Arg{idx(tokens), idx(heads), in(f32le(x)), in(f32le(cs)), in(f32le(sn)), out(4 * len(x))},
		Bytes:     float64(8*len(x) + 8*len(cs)),
		CheckWhat: "float64 per element, error ≤ 1e-6·(|x₀|+|x₁|)",
		Check: func(o []byte) (float64, error) {
			want := make([]float64, len(x))
			mag := make([]float64, len(x))
			for e := 0; e < len(x); e += 2 {
				t, i := e/(heads*128), (e%128)/2
				c, s := float64(cs[t*64+i]), float64(sn[t*64+i])
				a, b := float64(x[e]), float64(x[e+1])
				want[e], want[e+1] = a*c-b*s, a*s+b*c
				mag[e], mag[e+1] = math.Abs(a)+math.Abs(b), math.Abs(a)+math.Abs(b)
			}
			return closeTo("rope", f32s(o), want, func(i int) float64 { return 1e-6 * (mag[i] + 1e-6) })
		},
	}
}

// halfBytes encodes v as little-endian f16 (f16's rounding); bytesHalf
// decodes them.
func halfBytes(v []float32) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], f16(x))
	}
	return b
}

func bytesHalf(b []byte) []float32 {
	out := make([]float32, len(b)/2)
	for i := range out {
		out[i] = float32(f16to32(binary.LittleEndian.Uint16(b[2*i:])))
	}
	return out
}

// f16 rounds a float32 to IEEE half bits (round to nearest even; the
// values used are normal halves).
func f16(v float32) uint16 {
	b := math.Float32bits(v)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	man := b & 0x7fffff
	if exp <= 0 {
		return sign // the scales used here are never that small
	}
	h := uint32(exp)<<10 | man>>13
	rest := man & 0x1fff
	if rest > 0x1000 || (rest == 0x1000 && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}

// f16to32 widens half bits.
func f16to32(h uint16) float64 {
	exp := int(h>>10) & 0x1f
	man := float64(h & 0x3ff)
	var v float64
	if exp == 0 {
		v = man / 1024 * math.Pow(2, -14)
	} else {
		v = (1 + man/1024) * math.Pow(2, float64(exp-15))
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

// quantizeQ8 quantizes x as the mat-vec kernels do before their integer
// dot products: blocks of 32, scale d = amax/127, q = roundeven(x·(127/amax))
// (f32 arithmetic, as on the device); it returns the dequantized values d·q.
func quantizeQ8(x []float32) []float64 {
	out := make([]float64, len(x))
	for b := 0; b < len(x); b += 32 {
		var amax float32
		for _, v := range x[b : b+32] {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 127
		var id float32
		if amax > 0 {
			id = 127 / amax
		}
		for i, v := range x[b : b+32] {
			q := math.RoundToEven(float64(float32(v * id)))
			out[b+i] = float64(d) * q
		}
	}
	return out
}

// matvecCheck compares y with the float64 product of the dequantized
// weights w(r, c) and the q8-quantized activations xq (the kernels' own
// algorithm), relative to Σ|w·xq| of the row; it also records how far y
// lies from the product with the unquantized x (the cost of quantizing the
// activations, reported, not checked).
func matvecCheck(what string, rows, cols int, w func(r, c int) float64, x []float32, note *string) func([]byte) (float64, error) {
	var want, mag, exact, emag []float64
	xq := quantizeQ8(x)
	return func(o []byte) (float64, error) {
		if want == nil { // the references once, for every side checked
			want, mag = make([]float64, rows), make([]float64, rows)
			exact, emag = make([]float64, rows), make([]float64, rows)
			for r := range rows {
				for c := range cols {
					wv := w(r, c)
					want[r] += wv * xq[c]
					mag[r] += math.Abs(wv * xq[c])
					exact[r] += wv * float64(x[c])
					emag[r] += math.Abs(wv * float64(x[c]))
				}
			}
		}
		y := f32s(o)
		worst, err := closeTo(what, y, want, func(i int) float64 { return 3e-5 * (mag[i] + 1e-30) })
		if err == nil && len(y) == rows {
			dev := 0.0
			for r := range rows {
				dev = max(dev, math.Abs(float64(y[r])-exact[r])/(emag[r]+1e-30))
			}
			*note = fmt.Sprintf("|y − W·x| ≤ %.2g·Σ|w·x| against the unquantized x", dev)
		}
		return worst, err
	}
}

// Q8_0 is y = W·x for W rows×cols in q8_0 (int8 plane and f16 scale plane)
// by the kernel exported as export (matvec_q8_0 or a variant of it).
func Q8_0(export string, rows, cols int) *Instance {
	r := rng(7)
	q := make([]byte, rows*cols)
	for i := range q {
		q[i] = byte(r.next())
	}
	nb := cols / 32
	d := make([]byte, 2*rows*nb)
	scales := make([]float64, rows*nb)
	for i := range scales {
		h := f16(float32(r.next()%1000+1) / 65536)
		binary.LittleEndian.PutUint16(d[2*i:], h)
		scales[i] = f16to32(h)
	}
	x := uniform(cols, 8, -1, 2)
	inst := &Instance{
		File: "matvec_q.loom", Export: export, Shape: fmt.Sprintf("%dx%d", rows, cols),
		Workload:  []int64{int64(rows), int64(cols)},
		Args:      []Arg{idx(rows), idx(cols), in(q), in(d), in(f32le(x)), out(4 * rows)},
		Bytes:     float64(len(q) + len(d) + 4*cols + 4*rows),
		Flops:     2 * float64(rows) * float64(cols),
		Weights:   []int{2, 3},
		CheckWhat: matvecWhat,
	}
	inst.Check = matvecCheck("q8_0", rows, cols, func(row, c int) float64 {
		return scales[row*nb+c/32] * float64(int8(q[row*cols+c]))
	}, x, &inst.CheckNote)
	return inst
}

// Q4K is y = W·x for W rows×cols in ggml's q4_K blocks by the kernel
// exported as export (matvec_q4_k or a variant of it).
func Q4K(export string, rows, cols int) *Instance {
	r := rng(9)
	nsb := cols / 256
	w := make([]byte, rows*nsb*144)
	for i := range w {
		w[i] = byte(r.next())
	}
	// Valid, moderate f16 d and dmin in every block.
	for blk := 0; blk < rows*nsb; blk++ {
		binary.LittleEndian.PutUint16(w[blk*144:], f16(float32(r.next()%1000+1)/262144))
		binary.LittleEndian.PutUint16(w[blk*144+2:], f16(float32(r.next()%1000+1)/262144))
	}
	x := uniform(cols, 10, -1, 2)
	// Each sub-block's d·sc and dmin·m, decoded once for the reference.
	scale, minus := make([]float64, rows*cols/32), make([]float64, rows*cols/32)
	for b := range scale {
		blk := w[(b/8)*144:]
		d := f16to32(binary.LittleEndian.Uint16(blk))
		dmin := f16to32(binary.LittleEndian.Uint16(blk[2:]))
		s := blk[4:16]
		j := b % 8
		var sc, m int
		if j < 4 {
			sc, m = int(s[j]&63), int(s[j+4]&63)
		} else {
			sc = int(s[j+4]&0xf) | int(s[j-4]>>6)<<4
			m = int(s[j+4]>>4) | int(s[j]>>6)<<4
		}
		scale[b], minus[b] = d*float64(sc), dmin*float64(m)
	}
	deq := func(row, c int) float64 {
		blk := w[(row*nsb+c/256)*144:]
		j := (c % 256) / 32
		qb := blk[16+32*(j/2)+c%32]
		q := int(qb & 0xf)
		if j%2 == 1 {
			q = int(qb >> 4)
		}
		b := (row*cols + c) / 32
		return scale[b]*float64(q) - minus[b]
	}
	inst := &Instance{
		File: "matvec_q.loom", Export: export, Shape: fmt.Sprintf("%dx%d", rows, cols),
		Workload:  []int64{int64(rows), int64(cols)},
		Args:      []Arg{idx(rows), idx(cols), in(w), in(f32le(x)), out(4 * rows)},
		Bytes:     float64(len(w) + 4*cols + 4*rows),
		Flops:     2 * float64(rows) * float64(cols),
		Weights:   []int{2},
		CheckWhat: matvecWhat,
	}
	inst.Check = matvecCheck("q4_K", rows, cols, deq, x, &inst.CheckNote)
	return inst
}

// matvecWhat states the mat-vecs' reference.
const matvecWhat = "float64 over the dequantized weights and the q8-quantized activations (blocks of 32, as the kernels quantize them), error ≤ 3e-5·Σ|w·x| per row"

// Attention is one decode step of grouped-query attention over an f16 KV
// cache of seq positions: 4·kvh query heads of 128 dimensions, four to a
// kv head, scores scaled by 1/8 (a power of two, so the scaled queries are
// exact). The kernel writes each 128-position chunk's partial softmax
// state; the check merges them as flash-decoding's second step does and
// compares every head's output with a float64 softmax·V.
func Attention(kvh, seq int) *Instance {
	const dim, group, scale = 128, 4, 0.125
	qh, chunks := kvh*group, seq/128
	q := uniform(qh*dim, 11, -2, 4)
	// uniform's grid of 2^-10 in [-1, 1) is exact in f16.
	kf, vf := uniform(kvh*seq*dim, 12, -1, 2), uniform(kvh*seq*dim, 13, -1, 2)
	const rec = dim + 2 // acc[128], m, l
	inst := &Instance{
		File: "attention.loom", Export: "attn_decode_f16", Shape: fmt.Sprintf("%dx%dx%d", qh, kvh, seq),
		Workload: []int64{int64(kvh), int64(seq)},
		Args: []Arg{idx(kvh), idx(seq), f32arg(scale), in(f32le(q)), in(halfBytes(kf)), in(halfBytes(vf)),
			out(4 * kvh * chunks * group * rec)},
		Bytes:     float64(4*len(q) + 2*len(kf) + 2*len(vf) + 4*kvh*chunks*group*rec),
		Flops:     4 * float64(qh) * float64(seq) * dim,
		Weights:   []int{4, 5},
		CheckWhat: "partials merged in float64, against a float64 softmax(q·Kᵀ/8)·V per head, error ≤ 2e-5·Σ softmax·|V| per element",
	}
	inst.Check = func(o []byte) (float64, error) {
		got := f32s(o)
		if len(got) != kvh*chunks*group*rec {
			return 0, fmt.Errorf("attention: %d outputs, want %d", len(got), kvh*chunks*group*rec)
		}
		var merged, want, mag []float64
		w := make([]float64, seq)
		for h := range kvh {
			for g := range group {
				// The kernel's partials, merged.
				at := func(c int) []float32 { i := ((h*chunks+c)*group + g) * rec; return got[i : i+rec] }
				big := math.Inf(-1)
				for c := range chunks {
					big = max(big, float64(at(c)[dim]))
				}
				var l float64
				acc := make([]float64, dim)
				for c := range chunks {
					p := at(c)
					f := math.Exp(float64(p[dim]) - big)
					l += float64(p[dim+1]) * f
					for d := range dim {
						acc[d] += float64(p[d]) * f
					}
				}
				// The reference.
				qr := q[(h*group+g)*dim:][:dim]
				top := math.Inf(-1)
				for p := range seq {
					var s float64
					for d, x := range kf[(h*seq+p)*dim:][:dim] {
						s += float64(qr[d]) * float64(x)
					}
					w[p] = s * scale
					top = max(top, w[p])
				}
				var sum float64
				for p := range w {
					w[p] = math.Exp(w[p] - top)
					sum += w[p]
				}
				for d := range dim {
					var y, m float64
					for p := range seq {
						v := float64(vf[(h*seq+p)*dim+d])
						y += w[p] * v
						m += w[p] * math.Abs(v)
					}
					merged = append(merged, acc[d]/l)
					want, mag = append(want, y/sum), append(mag, m/sum)
				}
			}
		}
		got32 := make([]float32, len(merged))
		for i, x := range merged {
			got32[i] = float32(x)
		}
		return closeTo("attention", got32, want, func(i int) float64 { return 2e-5 * (mag[i] + 1e-6) })
	}
	return inst
}
