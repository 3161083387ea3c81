// Package ptx compiles Loom kernels to PTX text for NVIDIA GPUs. The driver
// JIT-compiles the text (cuModuleLoadData), so no CUDA toolkit is needed.
//
// The device ABI mirrors Loom's AMDGPU profile: index values are 32-bit
// signed, offsets and pointers 64-bit. Every launch parameter becomes one
// .param of the entry in launch-signature order: a buffer (or view) is its
// 64-bit global address, a scalar is passed at its carrier width (i1 as one
// byte, f16/bf16 as two).
//
// The code generator is deliberately simple: every SSA value gets a fresh
// virtual register of its class (%p, %rs is not used: small integers live
// sign-extended in %r, %rd, %h, %f, %fd) and structured control flow becomes
// labelled branches; ptxas does register allocation and scheduling. Calls
// are inlined. The GPU does not bounds-check: the generated Dispatch checks
// buffer extents before launch.
//
// Anything outside the supported subset is refused at Compile with an error
// of class ErrUnsupported that names the op and its position.
package ptx

import (
	"errors"
	"fmt"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// ErrUnsupported is the class of errors about Loom constructs the PTX backend
// does not lower; the message names the op and its position.
var ErrUnsupported = errors.New("ptx: unsupported")

// ErrInvalid is the class of errors about kernels that are malformed for
// code generation (a missing export, an ill-typed operand, a config value
// that is not supplied).
var ErrInvalid = errors.New("ptx: invalid kernel")

// Options select the config values and the target architecture.
type Options struct {
	// Config holds config values by symbol without '@'; a config.def in the
	// modules supplies a symbol missing here.
	Config map[string]loom.Const
	// SM is the device's compute capability times ten (90 for sm_90); 0
	// means 90. Lower values than 80 are refused: the generated code uses
	// max.NaN and cvt.bf16 instructions. Newer devices than sm_90 get
	// sm_90 code, which their driver JIT-compiles (the generator uses
	// nothing newer), so PTX serves a Blackwell as it does a Hopper.
	SM int
}

// Kernel is one compiled kernel.
type Kernel struct {
	// Entry is the name of the .entry function in PTX (the export name,
	// with characters PTX does not accept replaced).
	Entry string
	// PTX is the complete module text. Where the body's accesses depend on
	// the buffers' run-time alignment it holds two versions and picks one
	// at entry by testing the addresses of AlignedParams.
	PTX string
	// AlignedPTX, when PTX holds two versions, is the same entry with only
	// the one for buffers at 16-byte aligned addresses: no entry test, no
	// fallback, often fewer registers. A launch may use it only when every
	// buffer argument listed in AlignedParams is at an address that is a
	// multiple of 16; PTX serves any launch. "" when PTX has one version.
	AlignedPTX string
	// AlignedParams are the launch parameter indices (buffers) whose
	// addresses select AlignedPTX; nil when AlignedPTX is "".
	AlignedParams []int
	// Params describe the entry's parameters in launch-signature order.
	Params []Param
	// Providers lists, for each template apply, which provider ran:
	// "file:line:col: family → @provider", in emission order.
	Providers []string
	// WorkgroupStorageBytes is the static .shared memory of the entry:
	// buffer.alloca<workgroup> arrays plus collective scratch.
	WorkgroupStorageBytes int
	// WorkgroupSize is the workgroup size the code was specialised for when
	// it depends on no workload argument (collectives need it), else zeros.
	WorkgroupSize [3]int64
	// MaxRegs, for a static workgroup size that does not allow every
	// invocation 255 registers, is the most it allows with the workgroup
	// resident on one SM; else 0. ptxas may hold a kernel well below it and
	// spill: it kept a 512-invocation q6_K kernel of Loom's corpus at 64
	// registers with 2.9 KB of spills an invocation, which ran 3.1× slower
	// than CappedPTX, where it used 128. A loader that sees the default
	// build spill takes CappedPTX when that spills less (runtime,
	// internal/bench): a fixed .maxnreg could instead cost occupancy in
	// kernels that do not spill.
	MaxRegs int
	// WaitsForPredecessors says the entry runs griddepcontrol.wait before
	// anything but parameter arithmetic and prefetch hints (sm_90 and
	// newer): it touches no memory before the grids it depends on have
	// completed, so a launch may depend on its predecessor
	// programmatically, scheduled while that predecessor still runs
	// (hip.Graph.AddProgrammaticDependency). Each build then lets its own
	// dependents be scheduled right after that wait.
	WaitsForPredecessors bool
}

// CappedPTX is PTX with `.maxnreg MaxRegs` after the entry's .reqntid:
// ptxas may use up to that many registers. It is "" when MaxRegs is 0.
func (k *Kernel) CappedPTX() string { return k.capped(k.PTX) }

// CappedAlignedPTX is AlignedPTX capped as CappedPTX caps PTX; "" when
// either is.
func (k *Kernel) CappedAlignedPTX() string { return k.capped(k.AlignedPTX) }

// capped inserts `.maxnreg MaxRegs` after the .reqntid of module text, in
// place of the register budget of front-loaded sweeps (sweepRegs) where
// the text states one.
func (k *Kernel) capped(text string) string {
	if k.MaxRegs == 0 || text == "" {
		return ""
	}
	i := strings.Index(text, "\n.reqntid ")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(text[i+1:], '\n')
	if j < 0 {
		return ""
	}
	at := i + 1 + j + 1
	rest := text[at:]
	if strings.HasPrefix(rest, ".maxnreg ") {
		if n := strings.IndexByte(rest, '\n'); n >= 0 {
			rest = rest[n+1:]
		}
	}
	return text[:at] + fmt.Sprintf(".maxnreg %d\n", k.MaxRegs) + rest
}

// Param is one entry parameter.
type Param struct {
	Name        string
	Size, Align int
	// Buffer marks a buffer or view parameter, passed as a 64-bit address.
	Buffer bool
}

// Compile lowers the kernel exported as export, looked up among mods (whose
// functions and templates are all visible), to PTX.
func Compile(mods []*loom.Module, export string, opts Options) (k *Kernel, err error) {
	mods = loom.OnlyKernel(mods, export)
	bound := boundAlignments(mods, export)
	mods, err = loom.Lower(mods, loom.LowerOptions{Native: nativeOps, ShuffleScans: true})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	prog, err := loom.NewProgram(mods...)
	if err != nil {
		return nil, fmt.Errorf("ptx: %w", err)
	}
	kd, err := prog.Kernel(export)
	if err != nil {
		return nil, fmt.Errorf("ptx: %w", err)
	}
	sm := opts.SM
	if sm == 0 {
		sm = 90
	}
	if sm < 80 {
		return nil, fmt.Errorf("%w: sm_%d (the backend needs sm_80 or newer)", ErrUnsupported, sm)
	}
	cfg, err := prog.ConfigDefaults()
	if err != nil {
		return nil, fmt.Errorf("ptx: %w", err)
	}
	for key, v := range opts.Config {
		cfg[key] = v
	}
	e := newEmitter(prog, kd, cfg, sm)
	e.bound = bound
	defer func() {
		// A lowering bug must not take the caller down: report it with the
		// position of the op being lowered.
		if r := recover(); r != nil {
			k, err = nil, fmt.Errorf("%s: %w: internal error lowering %s: %v", e.curPos(), ErrInvalid, e.curName(), r)
		}
	}()
	return e.compile()
}

// boundAlignments is, for each buffer parameter of the kernel exported as
// export, the alignment Dispatch enforces when it binds it: the access
// analysis of the sources as the runtime and the generated bindings see
// them, before lowering. Lowering may let the analysis see more (a buffer
// passed to a block argument becomes a select it follows), but a binding
// is only checked against what the sources show, so the emitter assumes
// no more than that. Sources the analysis refuses give none (nil: every
// buffer may be bound at any byte).
func boundAlignments(mods []*loom.Module, export string) map[int]int64 {
	prog, err := loom.NewProgram(mods...)
	if err != nil {
		return nil
	}
	k, err := prog.Kernel(export)
	if err != nil {
		return nil
	}
	out := map[int]int64{}
	for _, a := range prog.Access(k) {
		out[a.Index] = int64(a.Alignment())
	}
	return out
}

// unsupported builds an ErrUnsupported error for op.
func unsupported(op *loom.Op, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s: %s", op.Pos, ErrUnsupported, op.Name, fmt.Sprintf(format, args...))
}

// invalid builds an ErrInvalid error at pos.
func invalid(pos loom.Pos, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", pos, ErrInvalid, fmt.Sprintf(format, args...))
}
