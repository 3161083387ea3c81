package ptx

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// A case is one kernel with deterministic inputs: workload values, launch
// arguments (scalars at carrier width, buffers as bytes), the geometry from
// the kernel's own launch config, and the element type of each buffer.
type kcase struct {
	name   string
	mods   []*loom.Module
	kd     *loom.Kernel
	cfg    map[string]loom.Const
	args   []interp.Arg
	elems  []*loom.Type // per launch param: buffer element type or nil
	launch interp.Launch
	// inexact: the kernel uses approximate math or reorders float
	// reductions, so results are compared with a tolerance.
	inexact bool
	// tensor: the kernel uses vector.mma, whose sums the tensor cores
	// round in their own order and internal precision.
	tensor bool
}

// scalarDefaults are values for launch scalars that have a meaning (a mode,
// a bin count, a byte offset); other index values use the common size.
var scalarDefaults = map[string]float64{
	"mode": 1, "nbins": 16, "steps": 3, "src_off": 64, "dst_off": 128,
	"which": 1, "bias": 3, "mul": 3, "scale": 1.5, "eps": 1e-5, "a": 1.5, "k": 70, "v": -2.25,
}

func constFor(t *loom.Type, name string, size int64) loom.Const {
	c := loom.Const{Type: t}
	d, ok := scalarDefaults[name]
	switch {
	case t.Kind == loom.TypeFloat:
		c.Float = 1.25
		if ok {
			c.Float = d
		}
	case t.Kind == loom.TypeInt && t.Bits == 1:
		c.Int = 1
	case ok:
		c.Int = int64(d)
	case t.Kind == loom.TypeIndex:
		c.Int = size
	default:
		c.Int = 2
	}
	return c
}

// argBits packs a scalar at its PTX carrier width.
func argBits(c loom.Const) uint64 {
	t := c.Type
	switch {
	case t.Kind == loom.TypeFloat && t.Name == "f32":
		return uint64(math.Float32bits(float32(c.Float)))
	case t.Kind == loom.TypeFloat && t.Name == "f64":
		return math.Float64bits(c.Float)
	case isHalf(t):
		return uint64(halfBits(t, c.Float))
	case t.Kind == loom.TypeIndex:
		return uint64(uint32(int32(c.Int)))
	}
	bits := intBits(t)
	if bits >= 64 {
		return uint64(c.Int)
	}
	return uint64(c.Int) & (1<<bits - 1)
}

// newCase builds inputs for kd; it returns an error when the analyses
// cannot size the launch (the kernel is then skipped, not failed).
func newCase(mods []*loom.Module, kd *loom.Kernel, cfg map[string]loom.Const, seed uint32) (*kcase, error) {
	prog, err := loom.NewProgram(mods...)
	if err != nil {
		return nil, err
	}
	c := &kcase{name: kd.Export, mods: mods, kd: kd, cfg: cfg}
	var env *loom.Env
	// Pick one common index size satisfying every evaluable check, with
	// the named defaults where they satisfy them too; a kernel no choice
	// satisfies is left out (a launch breaking its `where` is not legal).
	good := false
	sizes := []int64{70, 64, 96, 128, 32, 16, 8, 4, 256}
	for try := 0; try < 2*len(sizes) && !good; try++ {
		size := sizes[try%len(sizes)]
		named := try < len(sizes)
		env = &loom.Env{Config: cfg, Target: loom.TargetGPU}
		byName := map[string]loom.Const{}
		for _, p := range kd.Launch {
			if p.Type != nil && p.Type.IsScalar() {
				name := p.Name
				if !named {
					name = ""
				}
				byName[p.Name] = constFor(p.Type, name, size)
			}
		}
		for _, w := range kd.Workload {
			v, ok := byName[w.Name]
			if !ok {
				name := w.Name
				if !named {
					name = ""
				}
				v = constFor(w.Type, name, size)
			}
			env.Workload = append(env.Workload, v)
		}
		for _, p := range kd.Launch {
			if v, ok := byName[p.Name]; ok {
				env.Launch = append(env.Launch, v)
			} else {
				env.Launch = append(env.Launch, loom.Const{Type: p.Type})
			}
		}
		good = true
		for _, ch := range prog.ArgChecks(kd) {
			if ok, err := ch.Eval(env); err == nil && !ok {
				good = false
			}
		}
	}
	if !good {
		return nil, fmt.Errorf("no workload satisfies the kernel's checks")
	}
	g, err := prog.LaunchConfig(kd, env)
	if err != nil {
		return nil, fmt.Errorf("launch config: %w", err)
	}
	for ax := 0; ax < 3; ax++ {
		c.launch.Workgroups[ax], c.launch.WorkgroupSize[ax] = int(g.Workgroups[ax]), int(g.WorkgroupSize[ax])
	}
	dyn, err := prog.LaunchStorage(kd, env)
	if err != nil {
		return nil, fmt.Errorf("launch config: %w", err)
	}
	c.launch.WorkgroupStorage = int(dyn)
	extents := map[int]int{}
	for _, x := range prog.Extents(kd) {
		if x.Bytes == nil {
			continue
		}
		if b, err := x.Bytes.Eval(env); err == nil && b.Int > 0 {
			extents[x.Index] = int(b.Int)
		}
	}
	elems := map[int]*loom.Type{}
	for _, pa := range prog.Access(kd) {
		elems[pa.Index] = pa.Elem
	}
	rng := seed
	next := func() uint32 { rng = rng*1664525 + 1013904223; return rng >> 8 }
	c.elems = make([]*loom.Type, len(kd.Launch))
	for i, p := range kd.Launch {
		if p.Type == nil || p.Type.IsScalar() {
			c.args = append(c.args, interp.Arg{Bits: argBits(env.Launch[i])})
			continue
		}
		if p.Type.Kind == loom.TypeVector {
			// A vector parameter's lanes, little-endian (interp.Arg).
			lanes := 1
			for _, d := range p.Type.Dims {
				lanes *= int(max(d.Size, 1))
			}
			buf := make([]byte, lanes*carrierBytes(p.Type.Elem))
			fill(buf, p.Type.Elem, next)
			c.args = append(c.args, interp.Arg{Buffer: buf})
			continue
		}
		n, ok := extents[i]
		if !ok {
			n = 1 << 16
		}
		el := elems[i]
		if el == nil && p.Type.Kind == loom.TypeView {
			el = p.Type.Elem
		}
		c.elems[i] = el
		buf := make([]byte, n)
		fill(buf, el, next)
		c.args = append(c.args, interp.Arg{Buffer: buf})
	}
	c.inexact = usesInexact(prog, kd.Body)
	c.tensor = usesOp(kd.Body, "vector.mma")
	return c, nil
}

// fill writes deterministic element values: floats in [-2, 2), integers
// in [1, 64), raw bytes otherwise.
func fill(b []byte, el *loom.Type, next func() uint32) {
	size := 1
	if el != nil {
		size = carrierBytes(el)
	}
	for off := 0; off+size <= len(b); off += size {
		r := next()
		switch {
		case el == nil:
			b[off] = byte(r)
		case el.Kind == loom.TypeFloat:
			f := float64(r%4096)/1024 - 2
			switch el.Name {
			case "f32":
				binary.LittleEndian.PutUint32(b[off:], math.Float32bits(float32(f)))
			case "f64":
				binary.LittleEndian.PutUint64(b[off:], math.Float64bits(f))
			case "f16", "bf16":
				binary.LittleEndian.PutUint16(b[off:], halfBits(el, f))
			default:
				b[off] = byte(r)
			}
		default:
			v := uint64(r%63 + 1)
			for j := 0; j < size; j++ {
				b[off+j] = byte(v >> (8 * j))
			}
		}
	}
}

// inexactOps are lowered approximately or reassociated on the GPU.
var inexactOps = []string{"expf", "exp2f", "logf", "log2f", "log10f", "tanhf", "erff", "rsqrtf",
	"logisticf", "siluf", "powf", "sinf", "cosf", "workgroup.reduce", "subgroup.reduce", "atomic",
	"vector.mma"} // tensor cores sum in their own order

func usesInexact(prog *loom.Program, r *loom.Region) bool {
	if r == nil {
		return false
	}
	for _, op := range r.Ops {
		for _, n := range inexactOps {
			if strings.HasSuffix(op.Name, n) || strings.Contains(op.Name, "."+n) {
				if n != "atomic" || isFloatAtomic(op) {
					return true
				}
			}
		}
		for _, sub := range op.Regions {
			if usesInexact(prog, sub) {
				return true
			}
		}
		if op.Name == "func.call" {
			if f := prog.Func(op.Symbol); f != nil && usesInexact(prog, f.Body) {
				return true
			}
		}
	}
	return false
}

// usesOp reports whether region r (at any depth) has an op named name.
func usesOp(r *loom.Region, name string) bool {
	if r == nil {
		return false
	}
	for _, op := range r.Ops {
		if op.Name == name {
			return true
		}
		for _, sub := range op.Regions {
			if usesOp(sub, name) {
				return true
			}
		}
	}
	return false
}

func isFloatAtomic(op *loom.Op) bool { return strings.HasSuffix(op.Param, "f") }

// compare checks GPU output against the CPU executor's: bit-exact, or for
// inexact kernels within rel relative error (abs for values near zero).
func compare(c *kcase, i int, got, want []byte, rel float64) error {
	el := c.elems[i]
	if len(got) != len(want) {
		return fmt.Errorf("length %d vs %d", len(got), len(want))
	}
	if el == nil || !isFloat(el) || isF8(el) {
		for j := range got {
			if got[j] != want[j] {
				return fmt.Errorf("byte %d: gpu %#02x, cpu %#02x (element type %s)", j, got[j], want[j], typeName(el))
			}
		}
		return nil
	}
	size := carrierBytes(el)
	if c.tensor {
		rel = max(rel, 1e-3)
		if isHalf(el) {
			// f16 accumulators: 32 roundings in k order on the CPU
			// against fewer, wider ones in the tensor cores.
			rel = max(rel, 5e-2)
		}
	}
	if isHalf(el) {
		// One rounding more or less in a half-precision result is a
		// relative difference of 2^-11 (f16) or 2^-8 (bf16).
		rel = max(rel, 1e-2)
	}
	worst := 0.0
	for off := 0; off+size <= len(got); off += size {
		g, w := decodeF(el, got[off:]), decodeF(el, want[off:])
		// NaN payloads are not specified; signed zeros and every other
		// bit must agree in exact kernels.
		if math.IsNaN(g) && math.IsNaN(w) || g == w && math.Signbit(g) == math.Signbit(w) {
			continue
		}
		if !c.inexact {
			return fmt.Errorf("element %d: gpu %g, cpu %g (exact kernel)", off/size, g, w)
		}
		// Relative error, absolute below magnitude 1 (cancellation in
		// x·g + b leaves small results with large relative error).
		d := math.Abs(g-w) / math.Max(math.Abs(w), 1)
		if d > worst {
			worst = d
		}
		if !(d <= rel) {
			return fmt.Errorf("element %d: gpu %g, cpu %g (relative error %.3g > %.3g)", off/size, g, w, d, rel)
		}
	}
	return nil
}

func decodeF(el *loom.Type, b []byte) float64 {
	switch el.Name {
	case "f32":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case "f64":
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case "bf16":
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16))
	case "f16":
		h := binary.LittleEndian.Uint16(b)
		sign := 1.0
		if h&0x8000 != 0 {
			sign = -1
		}
		e, m := int(h>>10&0x1f), float64(h&0x3ff)
		switch e {
		case 0:
			return sign * math.Ldexp(m, -24)
		case 31:
			if m != 0 {
				return math.NaN()
			}
			return sign * math.Inf(1)
		}
		return sign * math.Ldexp(1+m/1024, e-15)
	}
	return 0
}
