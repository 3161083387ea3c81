package interp

import (
	"fmt"
	"runtime"

	"github.com/loomgen/loomgen/loom"
)

// Options select the target emulated by the executor, the values of the
// module's config symbols and the degree of parallelism.
type Options struct {
	// Target sets the index carrier width and subgroup size; the zero value
	// means loom.TargetGPU (index 32 bits, offset 64 bits, subgroup 32).
	Target loom.Target
	// Config holds config values by symbol without '@'; a config.def in the
	// modules supplies the value of a symbol missing here.
	Config map[string]loom.Const
	// Workers bounds the number of workgroups run in parallel; 0 means
	// GOMAXPROCS.
	Workers int
	// Sanitize turns on the checked mode (sanitize.go).
	Sanitize Sanitize
}

// Arg is one launch argument.
type Arg struct {
	// Buffer holds the bound bytes of a buffer or view parameter; every
	// access is checked against it. A vector parameter takes its lanes
	// from Buffer too: little-endian, lane 0 first, each at its element's
	// size (4 bytes for f32, 2 for f16, the carrier width for index).
	Buffer []byte
	// Bits holds a scalar parameter's value at its carrier width,
	// zero-extended: math.Float32bits for f32, uint64(uint32(int32(v))) for
	// a 32-bit index, raw bits for f16, 0 or 1 for i1.
	Bits uint64
}

// Launch is the geometry of one dispatch.
type Launch struct {
	Workgroups, WorkgroupSize [3]int
	// WorkgroupStorage is the bytes of dynamic workgroup storage each
	// workgroup gets (the kernel's dynamic_workgroup_storage clause);
	// kernel.workgroup.storage takes at most this much.
	WorkgroupStorage int
}

// Kernel is a compiled kernel, ready to run any number of times, also
// concurrently.
type Kernel struct {
	// providers records the template provider each apply resolved to.
	providers []string
	export    string
	kernel    *loom.Kernel
	tgt       target
	workers   int
	// fragWave is the invocations a subgroup fragment spans
	// (loom.FragmentWave).
	fragWave int
	// san is the checked mode (sanitize.go); on, the kernel has only its
	// exact per-lane form.
	san Sanitize

	params []*slot // launch parameters in signature order
	// pdims are the dimension registers of view parameters (nil entries
	// for static dims and for non-view parameters).
	pdims [][]*slot
	inits []constInit
	code  []instr
	// pre and body split code into the group-invariant prologue and the
	// per-workgroup rest (hoist.go); body is nil when nothing is hoisted.
	pre, body []instr
	slots     []*slot
	nI        int
	nF        int
	nV        int
	// maxComps is the widest vector register, sizing broadcast scratch.
	maxComps int
	maxDepth int
	allocas  []*allocaSite
	// staticWG is the workgroup storage known at Compile.
	staticWG int

	frames framePool
	lids   lidCache

	// batched marks the form compiled to run several workgroups as one
	// batch of lanes (workgroup ids are then per-lane values).
	batched bool
	// noBatch names why the kernel cannot run batched ("" when it can).
	noBatch string
	// batch is the batched form, nil when the kernel has none.
	batch *Kernel
	// groupOps: the kernel has barriers, collectives or subgroup ids,
	// which a batch runs per workgroup (groups.go); Run batches such a
	// kernel only for small workgroups (groupBatchLanes).
	groupOps bool
	// rerunSafe: no access reads a buffer parameter that an access
	// writes; readRoots and writtenRoots are those parameters, by bit
	// (rerun.go).
	rerunSafe bool
	// wgFast: every access of the batched form through workgroup memory
	// has its per-group fast form (batchwg.go), so Run batches it.
	wgFast                  bool
	readRoots, writtenRoots uint64
}

// target is the emulated target after defaults.
type target struct {
	indexBits, offsetBits, subgroup int
	// indexMin, indexMax bound an index value: a carrier of n < 64 bits
	// holds [-2^(n-1), 2^n), negative values signed and non-negative
	// ones unsigned, as Loom's AMDGPU lowering carries addresses in u32
	// (LOOM.md 6.1). idMax bounds work-item ids and grids (signed).
	indexMin, indexMax, idMax int64
	indexSize, offsetSize     int
}

func makeTarget(t loom.Target) target {
	if t.IndexBits == 0 && t.OffsetBits == 0 && t.SubgroupSize == 0 {
		t = loom.TargetGPU
	}
	if t.IndexBits == 0 {
		t.IndexBits = 64
	}
	if t.OffsetBits == 0 {
		t.OffsetBits = 64
	}
	if t.SubgroupSize == 0 {
		t.SubgroupSize = 32
	}
	g := target{indexBits: t.IndexBits, offsetBits: t.OffsetBits, subgroup: t.SubgroupSize}
	if g.indexBits >= 64 {
		g.indexMin, g.indexMax, g.idMax = -1<<63, 1<<63-1, 1<<63-1
	} else {
		g.indexMin, g.indexMax, g.idMax = -1<<(g.indexBits-1), 1<<g.indexBits-1, 1<<(g.indexBits-1)-1
	}
	g.indexSize, g.offsetSize = g.indexBits/8, g.offsetBits/8
	return g
}

// Providers lists, for each template apply compiled, which provider ran:
// "file:line:col: family → @provider", in compile order.
func (k *Kernel) Providers() []string { return k.providers }

// Export returns the kernel's export name.
func (k *Kernel) Export() string { return k.export }

// WorkgroupStorageBytes is the workgroup-local memory the kernel's
// buffer.alloca<workgroup> sites need whose sizes are known at Compile.
func (k *Kernel) WorkgroupStorageBytes() int { return k.staticWG }

// nativeOps are the ops the CPU executor computes itself rather than
// through the shared lowering (loom.Lower): its float64 pow, sin, cos,
// sin/cos of turns (as Loom folds them), softplus, gelu, log1p, expm1,
// atan, atan2, sinh, cosh and the other libm functions are correctly rounded to f32 where the shared
// sequences are not, and a clamp, sign or rotate is one step instead of
// four or five.
var nativeOps = map[string]bool{
	"scalar.powf": true, "vector.powf": true, "scalar.sinf": true, "vector.sinf": true,
	"scalar.cosf": true, "vector.cosf": true, "scalar.clampf": true, "vector.clampf": true,
	"scalar.sinturnsf": true, "vector.sinturnsf": true, "scalar.costurnsf": true, "vector.costurnsf": true,
	"scalar.softplusf": true, "vector.softplusf": true, "scalar.signi": true, "vector.signi": true,
	"scalar.signf": true, "vector.signf": true, "scalar.geluf": true, "vector.geluf": true,
	"scalar.rotli": true, "scalar.rotri": true, "vector.rotli": true, "vector.rotri": true,
	"scalar.log1pf": true, "vector.log1pf": true, "scalar.expm1f": true, "vector.expm1f": true,
	"scalar.atanf": true, "vector.atanf": true, "scalar.atan2f": true, "vector.atan2f": true,
	"scalar.sinhf": true, "vector.sinhf": true, "scalar.coshf": true, "vector.coshf": true,
	"scalar.tanf": true, "vector.tanf": true, "scalar.asinf": true, "vector.asinf": true,
	"scalar.acosf": true, "vector.acosf": true, "scalar.asinhf": true, "vector.asinhf": true,
	"scalar.acoshf": true, "vector.acoshf": true, "scalar.atanhf": true, "vector.atanhf": true,
	"scalar.cbrtf": true, "vector.cbrtf": true, "scalar.erfcf": true, "vector.erfcf": true,
}

// Compile prepares the kernel exported as export (looked up among mods,
// whose funcs and templates are all visible) for execution. Unsupported ops
// are refused here with their position.
func Compile(mods []*loom.Module, export string, opts Options) (*Kernel, error) {
	mods, err := loom.Lower(loom.OnlyKernel(mods, export), loom.LowerOptions{Native: nativeOps})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	var kd *loom.Kernel
	for _, m := range mods {
		if m == nil {
			continue
		}
		for _, k := range m.Kernels {
			if k.Export == export && !k.Decl {
				if kd != nil {
					return nil, compileErr(k.Op.Pos, ErrInvalid, "kernel %q is also defined at %s", export, kd.Op.Pos)
				}
				kd = k
			}
		}
	}
	if kd == nil {
		return nil, fmt.Errorf("no kernel.def exports %q: %w", export, ErrNotFound)
	}
	if kd.Body == nil {
		return nil, compileErr(kd.Op.Pos, ErrInvalid, "kernel %q has no body", export)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if opts.Sanitize.GlobalRaces {
		workers = 1 // the global shadow is shared by the dispatch's workgroups
	}
	wave := loom.FragmentWave(mods, kd)
	k := &Kernel{export: export, kernel: kd, tgt: makeTarget(opts.Target), workers: workers, san: opts.Sanitize, fragWave: wave}
	c, err := newCompiler(k, mods, opts)
	if err != nil {
		return nil, err
	}
	if err := c.compileKernel(kd); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", export, err)
	}
	if (k.groupOps || len(k.allocas) > 0) && !k.rerunSafe {
		// A batch's error may be a later group's than the lowest
		// failing one, and running its groups again would not be exact
		// (rerun.go): kernels with barriers, collectives or workgroup
		// memory get the batched form only where errors stay exact.
		k.noBatch = "reads a buffer it writes"
	}
	if k.san.on() {
		k.noBatch = "checked mode"
	}
	if k.noBatch == "" {
		// Without inter-lane communication, a batch of workgroups is
		// the same computation as the workgroups one by one.
		kb := &Kernel{export: export, kernel: kd, tgt: k.tgt, workers: workers, batched: true, fragWave: wave}
		cb, err := newCompiler(kb, mods, opts)
		if err == nil && cb.compileKernel(kd) == nil && kb.noBatch == "" {
			k.batch = kb
			kb.wgFast = len(kb.allocas) > 0 && cb.wgSlow == 0
		}
	}
	return k, nil
}
