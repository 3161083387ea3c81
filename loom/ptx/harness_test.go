package ptx

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/loomgen/loomgen/internal/crosscheck"
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

// newCase builds inputs for kd (crosscheck.NewCase: sizes from the
// analysed extents, deterministic values); it returns an error when the
// analyses cannot size the launch (the kernel is then skipped, not
// failed).
func newCase(mods []*loom.Module, kd *loom.Kernel, cfg map[string]loom.Const, seed uint32) (*kcase, error) {
	prog, err := loom.NewProgram(mods...)
	if err != nil {
		return nil, err
	}
	cc, err := crosscheck.NewCase(mods, prog, kd, cfg, seed, 0)
	if err != nil {
		return nil, err
	}
	c := &kcase{name: kd.Export, mods: mods, kd: kd, cfg: cfg, args: cc.Args, elems: cc.Elems, launch: cc.Launch}
	c.inexact = usesInexact(prog, kd.Body)
	c.tensor = usesOp(kd.Body, "vector.mma")
	return c, nil
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
	switch el.ByteSize() {
	case 2:
		return crosscheck.Decode(el, uint64(binary.LittleEndian.Uint16(b)))
	case 4:
		return crosscheck.Decode(el, uint64(binary.LittleEndian.Uint32(b)))
	}
	return crosscheck.Decode(el, binary.LittleEndian.Uint64(b))
}
