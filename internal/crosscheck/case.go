// Package crosscheck builds deterministic inputs for a Loom kernel from its
// analysed signature, runs it on the CPU executor, and compares another
// backend's output buffers with the CPU executor's under the accuracy rules
// of LOOM.md §11: bit-exact where every op is exact, within stated ulp
// bounds where the kernel uses approximate math or reorders float sums.
// cmd/loomdiff runs it over corpora against PTX on an NVIDIA GPU.
package crosscheck

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// DefaultBufferBytes is the length given to a buffer whose extent the
// analysis cannot compute (data-dependent offsets, strided layouts, opaque
// uses): 64 KiB, enough for the corpus's small launches. A Case notes each
// buffer sized this way.
const DefaultBufferBytes = 1 << 16

// DefaultConfigInt is the value given to a scalar config symbol that has
// no config.def default (i1 symbols get 0).
const DefaultConfigInt = 64

// Case is one kernel with deterministic inputs: launch arguments (scalars
// at the GPU carrier widths — index 32 bits, offset 64 — and buffers as
// bytes), the geometry of the kernel's own launch config, and the element
// type of each buffer.
type Case struct {
	Name   string
	Mods   []*loom.Module
	Kernel *loom.Kernel
	Config map[string]loom.Const
	Args   []interp.Arg
	// Elems holds, per launch parameter, the element type of a buffer all
	// of whose views share one (nil for scalars and mixed buffers, which
	// are compared byte by byte).
	Elems  []*loom.Type
	Launch interp.Launch
	// Size is the value index scalars were given (Sizes).
	Size int64
	// Accuracy is how far the kernel's float results may differ between
	// backends (see Classify).
	Accuracy Accuracy
	// Notes lists the choices the inputs rest on that the kernel did not
	// determine: defaulted config values and buffer lengths.
	Notes []string
}

// scalarDefaults are values for launch scalars whose name says they mean
// something other than a size (a mode, a bin count, a byte offset); every
// other index scalar gets the common size.
var scalarDefaults = map[string]float64{
	"mode": 1, "nbins": 16, "steps": 3, "src_off": 64, "dst_off": 128,
	"which": 1, "bias": 3, "mul": 3, "scale": 1.5, "eps": 1e-5, "a": 1.5, "k": 70, "v": -2.25,
}

// Sizes are the common index sizes NewCase tries in order until the
// kernel's evaluable `where`/`assume` checks all hold: 70 first (not a
// multiple of a workgroup size, so bounds guards are exercised), then
// powers of two and multiples of 32 for kernels that assume whole
// workgroups.
var Sizes = []int64{70, 64, 96, 128, 32, 16, 8, 4, 256}

// Config returns config values for prog (parsed from mods): each
// config.def's default, and DefaultConfigInt for a scalar config.decl
// without one; notes name the latter.
func Config(mods []*loom.Module, prog *loom.Program) (map[string]loom.Const, []string, error) {
	cfg, err := prog.ConfigDefaults()
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	for _, m := range mods {
		for _, d := range m.ConfigDecls {
			if _, ok := cfg[d.Symbol]; ok || d.Type == nil || !d.Type.IsScalar() {
				continue
			}
			c := loom.Const{Type: d.Type, Int: DefaultConfigInt}
			if d.Type.Kind == loom.TypeInt && d.Type.Bits == 1 {
				c.Int = 0
			}
			if d.Type.Kind == loom.TypeFloat {
				c.Int, c.Float = 0, DefaultConfigInt
			}
			cfg[d.Symbol] = c
			notes = append(notes, fmt.Sprintf("config @%s has no default: %d", d.Symbol, DefaultConfigInt))
		}
	}
	sort.Strings(notes)
	return cfg, notes, nil
}

// scalarEnv gives every scalar of kd a value: scalarDefaults by name when
// named, 1.25 for other floats, size for index scalars (for every integer
// scalar when not named), 2 otherwise. An index scalar named in mults
// gets size rounded up to its multiple instead.
func scalarEnv(kd *loom.Kernel, cfg map[string]loom.Const, size int64, named bool, mults map[string]int64) *loom.Env {
	env := &loom.Env{Config: cfg, Target: loom.TargetGPU}
	byName := map[string]loom.Const{}
	nameOf := func(n string) string {
		if named {
			return n
		}
		return ""
	}
	value := func(t *loom.Type, name string) loom.Const {
		c := constFor(t, nameOf(name), size)
		if m := mults[name]; m > 0 && t.Kind == loom.TypeIndex {
			c.Int = (size + m - 1) / m * m
		}
		return c
	}
	for _, p := range kd.Launch {
		if p.Type != nil && p.Type.IsScalar() {
			byName[p.Name] = value(p.Type, p.Name)
		}
	}
	for _, w := range kd.Workload {
		v, ok := byName[w.Name]
		if !ok {
			v = value(w.Type, w.Name)
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
	return env
}

// multiples maps each index scalar of kd that a check mul(%p, n)
// constrains, n a positive constant, to n (the least common multiple of
// several), by parameter name.
func multiples(kd *loom.Kernel, checks []loom.ArgCheck) map[string]int64 {
	out := map[string]int64{}
	for _, ch := range checks {
		if ch.Pred != "mul" || len(ch.Args) != 2 || !ch.Args[1].IsConst() || ch.Args[1].Const.Int <= 0 {
			continue
		}
		var p *loom.Value
		switch a := ch.Args[0]; {
		case a.Op == loom.ExprLaunch && a.Arg < len(kd.Launch):
			p = kd.Launch[a.Arg]
		case a.Op == loom.ExprWorkload && a.Arg < len(kd.Workload):
			p = kd.Workload[a.Arg]
		}
		if p == nil || p.Type == nil || p.Type.Kind != loom.TypeIndex {
			continue
		}
		n := ch.Args[1].Const.Int
		if m := out[p.Name]; m > 0 {
			n = m / gcd(m, n) * n
		}
		out[p.Name] = n
	}
	return out
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
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
	case t.Kind == loom.TypeIndex, name == "":
		// Without names every integer scalar takes the size, so that
		// checks such as mul(%byte_offset, 4) can hold.
		c.Int = size
	default:
		c.Int = 2
	}
	return c
}

// NewCase builds inputs for kd of prog (parsed from mods) with config cfg,
// giving index scalars the first of Sizes from index first on that
// satisfies the kernel's checks and launches at least one workgroup. It returns an error when none does or
// the analyses cannot compute the launch geometry: the kernel cannot be
// run with inputs inferred from its signature.
func NewCase(mods []*loom.Module, prog *loom.Program, kd *loom.Kernel, cfg map[string]loom.Const, seed uint32, first int) (*Case, error) {
	c := &Case{Name: kd.Export, Mods: mods, Kernel: kd, Config: cfg}
	var env *loom.Env
	// Named scalars keep their defaults where those satisfy the checks
	// too; a launch breaking its `where` is not legal.
	good := false
	checks := prog.ArgChecks(kd)
	// The common size first, by name and then for every integer scalar;
	// last, with each scalar a mul check constrains rounded up to its
	// multiple (a row length that must be a multiple of 2048 gets 2048,
	// the other sizes stay small).
	for _, try := range []struct {
		named bool
		mults map[string]int64
	}{{true, nil}, {false, nil}, {true, multiples(kd, checks)}} {
		if try.mults != nil && len(try.mults) == 0 {
			break
		}
		named := try.named
		for _, size := range Sizes[min(first, len(Sizes)):] {
			env = scalarEnv(kd, cfg, size, named, try.mults)
			good = true
			for _, ch := range checks {
				if ok, err := ch.Eval(env); err == nil && !ok {
					good = false
				}
			}
			// A grid without workgroups runs nothing on the CPU executor
			// and is refused by Dispatch: no comparison.
			if g, err := prog.LaunchConfig(kd, env); good && err == nil {
				good = g.Workgroups[0] > 0 && g.Workgroups[1] > 0 && g.Workgroups[2] > 0
			}
			if good {
				c.Size = size
				break
			}
		}
		if good {
			break
		}
	}
	if !good {
		return nil, fmt.Errorf("no workload size satisfies the kernel's checks with at least one workgroup")
	}
	g, err := prog.LaunchConfig(kd, env)
	if err != nil {
		return nil, fmt.Errorf("launch config: %w", err)
	}
	for ax := 0; ax < 3; ax++ {
		c.Launch.Workgroups[ax], c.Launch.WorkgroupSize[ax] = int(g.Workgroups[ax]), int(g.WorkgroupSize[ax])
	}
	dyn, err := prog.LaunchStorage(kd, env)
	if err != nil {
		return nil, fmt.Errorf("launch config: %w", err)
	}
	c.Launch.WorkgroupStorage = int(dyn)
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
	c.Elems = make([]*loom.Type, len(kd.Launch))
	for i, p := range kd.Launch {
		if p.Type == nil || p.Type.IsScalar() {
			c.Args = append(c.Args, interp.Arg{Bits: ArgBits(env.Launch[i])})
			continue
		}
		if p.Type.Kind == loom.TypeVector {
			// A vector parameter's lanes, little-endian (interp.Arg).
			lanes := 1
			for _, d := range p.Type.Dims {
				lanes *= int(max(d.Size, 1))
			}
			buf := make([]byte, lanes*elemBytes(p.Type.Elem))
			Fill(buf, p.Type.Elem, next)
			c.Args = append(c.Args, interp.Arg{Buffer: buf})
			continue
		}
		n, ok := extents[i]
		if !ok {
			n = DefaultBufferBytes
			c.Notes = append(c.Notes, fmt.Sprintf("extent of %%%s unknown: %d bytes", p.Name, n))
		}
		el := elems[i]
		if el == nil && p.Type.Kind == loom.TypeView {
			el = p.Type.Elem
		}
		c.Elems[i] = el
		buf := make([]byte, n)
		Fill(buf, el, next)
		c.Args = append(c.Args, interp.Arg{Buffer: buf})
	}
	c.Accuracy = Classify(prog, kd.Body, c.Launch.WorkgroupSize[0]*c.Launch.WorkgroupSize[1]*c.Launch.WorkgroupSize[2])
	return c, nil
}

// ArgBits packs a scalar at its GPU carrier width (index 32 bits).
func ArgBits(c loom.Const) uint64 {
	t := c.Type
	switch {
	case t.Kind == loom.TypeFloat && t.Name == "f32":
		return uint64(math.Float32bits(float32(c.Float)))
	case t.Kind == loom.TypeFloat && t.Name == "f64":
		return math.Float64bits(c.Float)
	case t.Kind == loom.TypeFloat && (t.Name == "f16" || t.Name == "bf16"):
		return uint64(loom.HalfBits(t, c.Float))
	case t.Kind == loom.TypeIndex:
		return uint64(uint32(int32(c.Int)))
	case t.Kind == loom.TypeOffset:
		return uint64(c.Int)
	}
	if t.Bits >= 64 {
		return uint64(c.Int)
	}
	return uint64(c.Int) & (1<<t.Bits - 1)
}

// Fill writes deterministic element values: floats in [-2, 2) on a 2^-10
// grid, integers in [1, 64), raw bytes where the element type is unknown.
func Fill(b []byte, el *loom.Type, next func() uint32) {
	size := 1
	if el != nil {
		size = max(elemBytes(el), 1)
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
				binary.LittleEndian.PutUint16(b[off:], loom.HalfBits(el, f))
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

// elemBytes is the size in memory of one element (index and offset at the
// GPU carriers).
func elemBytes(t *loom.Type) int { return loom.TargetGPU.ByteSizeOn(t) }

// RunCPU runs c on the CPU executor over copies of its buffers and returns
// them. With sanitize, the checked mode reports data races (interp.ErrRace)
// within and between workgroups.
func RunCPU(c *Case, sanitize bool) ([][]byte, error) {
	opts := interp.Options{Config: c.Config}
	if sanitize {
		opts.Sanitize = interp.Sanitize{Races: true, GlobalRaces: true}
	}
	k, err := interp.Compile(c.Mods, c.Kernel.Export, opts)
	if err != nil {
		return nil, err
	}
	args := make([]interp.Arg, len(c.Args))
	out := make([][]byte, len(c.Args))
	for i, a := range c.Args {
		args[i] = a
		if a.Buffer != nil {
			out[i] = append([]byte(nil), a.Buffer...)
			args[i].Buffer = out[i]
		}
	}
	return out, k.Run(c.Launch, args)
}
