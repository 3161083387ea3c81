package interp

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	little "github.com/loomgen/loomgen/internal/le"
	"github.com/loomgen/loomgen/loom"
)

// parseSrc parses an inline Loom source.
func parseSrc(t testing.TB, src string) *loom.Module {
	t.Helper()
	m, err := loom.ParseFile("inline.loom", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return m
}

// corpus parses one loom/testdata file.
func corpus(t testing.TB, name string) *loom.Module {
	t.Helper()
	p := filepath.Join("..", "testdata", name)
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loom.ParseFile(p, src)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return m
}

// kernelRun compiles export from m and launches it with the geometry its
// own launch-config region computes for the workload values.
type kernelRun struct {
	t    testing.TB
	mods []*loom.Module
	k    *Kernel
	kd   *loom.Kernel
	prog *loom.Program
	cfg  map[string]loom.Const
}

func compileRun(t testing.TB, m *loom.Module, export string, opts Options) *kernelRun {
	t.Helper()
	k, err := Compile([]*loom.Module{m}, export, opts)
	if err != nil {
		t.Fatalf("compile %s: %v", export, err)
	}
	p, err := loom.NewProgram(m)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := p.Kernel(export)
	if err != nil {
		t.Fatal(err)
	}
	return &kernelRun{t: t, mods: []*loom.Module{m}, k: k, kd: kd, prog: p, cfg: opts.Config}
}

// launch computes the geometry for workload (index values in workload order).
func (r *kernelRun) launch(workload ...int64) Launch {
	r.t.Helper()
	env := &loom.Env{Config: r.cfg, Target: loom.TargetGPU}
	for i, v := range workload {
		env.Workload = append(env.Workload, loom.Const{Type: r.kd.Workload[i].Type, Int: v})
	}
	g, err := r.prog.LaunchConfig(r.kd, env)
	if err != nil {
		r.t.Fatalf("launch config: %v", err)
	}
	var l Launch
	for i := 0; i < 3; i++ {
		l.Workgroups[i], l.WorkgroupSize[i] = int(g.Workgroups[i]), int(g.WorkgroupSize[i])
	}
	dyn, err := r.prog.LaunchStorage(r.kd, env)
	if err != nil {
		r.t.Fatalf("launch config: %v", err)
	}
	l.WorkgroupStorage = int(dyn)
	return l
}

// run launches and fails the test on error.
func (r *kernelRun) run(workload []int64, args ...Arg) {
	r.t.Helper()
	if err := r.k.Run(r.launch(workload...), args); err != nil {
		r.t.Fatalf("run: %v", err)
	}
}

func wl(v ...int64) []int64 { return v }

func idx(v int64) Arg    { return Arg{Bits: uint64(uint32(int32(v)))} }
func f32a(v float32) Arg { return Arg{Bits: uint64(math.Float32bits(v))} }
func buf(b []byte) Arg   { return Arg{Buffer: b} }

func f32bytes(xs []float32) []byte { return little.F32Bytes(xs) }
func bytesF32(b []byte) []float32  { return little.BytesF32(b) }

func i32bytes(xs []int32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func bytesI32(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// ramp returns n deterministic pseudo-random floats in [-scale, scale).
func ramp(n int, seed uint32, scale float32) []float32 {
	out := make([]float32, n)
	s := seed*2654435761 + 1
	for i := range out {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		out[i] = (float32(s%20000)/10000 - 1) * scale
	}
	return out
}

// exactF32 compares bit for bit (NaNs by NaN-ness).
func exactF32(t testing.TB, name string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			t.Fatalf("%s[%d] = %v, want %v", name, i, g, w)
		}
	}
}

// closeF32 compares with a relative-plus-absolute tolerance.
func closeF32(t testing.TB, name string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		d := math.Abs(float64(got[i]) - want[i])
		if d > tol*(1+math.Abs(want[i])) || got[i] != got[i] {
			t.Fatalf("%s[%d] = %v, want %v (tolerance %g)", name, i, got[i], want[i], tol)
		}
	}
}

func exactI32(t testing.TB, name string, got, want []int32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s[%d] = %d, want %d", name, i, got[i], want[i])
		}
	}
}
