package runtime

import (
	"errors"
	"fmt"
	"math"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/loom"
)

// Dispatch is a checked, sealed launch of a compiled kernel. Only
// Session.NewDispatch makes one (generated Dispatch constructors call it):
// it computes the grid, workgroup size and dynamic workgroup storage from
// the kernel's own launch-config region, checks every predicate, buffer
// extent, access and carrier width, and packs the launch. A Dispatch has
// no exported fields and shares nothing mutable with its caller, so what
// Record and Run receive is what was checked. The zero Dispatch is refused
// everywhere.
type Dispatch struct {
	p *sealedDispatch
}

// sealedDispatch is what NewDispatch proved consistent. Nothing writes it
// after NewDispatch returns; the regions it binds stay valid for the
// session's life (allocations are released only by Close), so Record and
// Run need only check that it belongs to their session.
type sealedDispatch struct {
	// kernel and packed come first, together: they are all a direct Run
	// reads (kernel.sess, then the packed launch), and a launch evicts
	// them from the nearer caches, so each further line they spread over
	// costs a miss per Run.
	kernel Kernel
	// packed is the launch as the backend packed it at seal time
	// (launchPacker), nil where it packs nothing; Run calls it directly.
	packed *hip.PackedLaunch
	launch launchCmd // the checked launch, for Record and unpacked backends
	args   []Arg     // NewDispatch's own copy of the launch arguments
	spans  []span    // the ranges the bindings touch, weights excluded
}

func (Dispatch) isCommand() {}

// IsZero reports whether d is the zero Dispatch, which Record and Run refuse.
func (d Dispatch) IsZero() bool { return d.p == nil }

// Kernel is the dispatched kernel.
func (d Dispatch) Kernel() Kernel {
	if d.p == nil {
		return Kernel{}
	}
	return d.p.kernel
}

// Workgroups is the grid the kernel's launch config gives for the
// dispatch's arguments.
func (d Dispatch) Workgroups() [3]int {
	if d.p == nil {
		return [3]int{}
	}
	return d.p.launch.Workgroups
}

// WorkgroupSize is the workgroup size the kernel's launch config gives.
func (d Dispatch) WorkgroupSize() [3]int {
	if d.p == nil {
		return [3]int{}
	}
	return d.p.launch.WorkgroupSize
}

// WorkgroupStorage is the dynamic workgroup storage in bytes each
// workgroup gets (the dynamic_workgroup_storage clause; 0 without one).
func (d Dispatch) WorkgroupStorage() int {
	if d.p == nil {
		return 0
	}
	return d.p.launch.WorkgroupStorage
}

// Args returns a copy of the launch arguments.
func (d Dispatch) Args() []Arg {
	if d.p == nil {
		return nil
	}
	return append([]Arg(nil), d.p.args...)
}

// nargs is the number of launch arguments, for sizing.
func (d *Dispatch) nargs() int {
	if d.p == nil {
		return 0
	}
	return len(d.p.args)
}

// zeroDispatch is the refusal of a Dispatch that NewDispatch did not make.
var zeroDispatch = fmt.Errorf("%w: zero Dispatch (make dispatches with Session.NewDispatch or generated bindings)", ErrArgument)

// NewDispatch checks a dispatch of k and seals it. workload holds the
// arguments of the kernel's workload signature and args those of its
// launch signature, each in order; a parameter named in both must get the
// same value in both. It evaluates the kernel's launch-config region (with
// the compiled config and target) for the grid, workgroup size and dynamic
// workgroup storage, and refuses, wrapping ErrArgument (ErrForeign,
// ErrWeightWrite and ErrBounds where they apply):
//   - arguments of the wrong number or Loom type, scalars that do not fit
//     their carrier on the compiled target;
//   - arguments that break a where clause or top-level index.assume /
//     scalar.assume of the kernel;
//   - a grid with no workgroups or past 2^31-1 per axis, a workgroup size
//     past 2^20 per axis, storage past the backend's limit;
//   - a buffer shorter than the kernel's views over it span for these
//     arguments, or whose extent overflows (except in a sanitized CPU
//     session, Options.Sanitize, whose executor reports such accesses as
//     events); a workgroup-storage use larger than the launch provides;
//   - a binding from another session, with less access than the body
//     performs, or writing a weight.
//
// The returned Dispatch copies args; changing them afterwards changes
// nothing.
func (s *Session) NewDispatch(k Kernel, workload, args []Arg) (Dispatch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return Dispatch{}, err
	}
	ck, err := s.kernel(k)
	if err != nil {
		return Dispatch{}, err
	}
	sd, err := s.seal(ck, k, workload, args)
	if err != nil {
		return Dispatch{}, fmt.Errorf("kernel %s: %w", ck.info.Export, err)
	}
	return Dispatch{p: sd}, nil
}

// seal is NewDispatch after the handle resolved; the caller holds s.mu.
func (s *Session) seal(ck *compiledKernel, k Kernel, workload, args []Arg) (*sealedDispatch, error) {
	sd := &sealedDispatch{kernel: k, args: append([]Arg(nil), args...)}
	sd.launch = launchCmd{Kernel: ck.dev, Name: ck.info.Export, Args: make([]launchArg, len(sd.args))}
	// Kinds, carriers, regions and access first: the evaluation below
	// reads the scalars as the kernel's types.
	spans, err := s.packArgs(ck, sd.args, sd.launch.Args, make([]span, 0, len(args)), true)
	if err != nil {
		return nil, err
	}
	sd.spans = spans
	if err := checkNoalias(ck, sd.args); err != nil {
		return nil, err
	}
	if ck.kern == nil || ck.launchExprs == nil {
		return nil, fmt.Errorf("%w: no launch configuration the runtime can evaluate (%v)", ErrArgument, ck.launchErr)
	}
	env, err := ck.env(workload, sd.args)
	if err != nil {
		return nil, err
	}
	for _, c := range ck.checks {
		ok, err := c.Eval(env)
		if err != nil {
			return nil, fmt.Errorf("%w: %s at %s cannot be checked for these arguments: %w", ErrArgument, c.Text, c.Pos, err)
		}
		if !ok {
			return nil, fmt.Errorf("%w: the arguments violate %s at %s", ErrArgument, c.Text, c.Pos)
		}
	}
	g, err := ck.launchExprs.Eval(env)
	if err != nil {
		return nil, fmt.Errorf("%w: launch config: %w", ErrArgument, err)
	}
	storage, err := ck.launchExprs.EvalStorage(env)
	if err != nil {
		return nil, fmt.Errorf("%w: launch config: %w", ErrArgument, err)
	}
	l := &sd.launch
	for i := range 3 {
		if g.Workgroups[i] < 1 || g.Workgroups[i] > 1<<31-1 || g.WorkgroupSize[i] < 1 || g.WorkgroupSize[i] > 1<<20 {
			return nil, fmt.Errorf("%w: the launch config at %s gives workgroups %v and workgroup size %v for these arguments; each count must be in [1, 2^31), each size in [1, 2^20] (with no work to do, skip the dispatch)",
				ErrArgument, ck.launchExprs.Pos, g.Workgroups, g.WorkgroupSize)
		}
		l.Workgroups[i], l.WorkgroupSize[i] = int(g.Workgroups[i]), int(g.WorkgroupSize[i])
	}
	if storage > int64(ck.maxStorage) {
		return nil, fmt.Errorf("%w: %d bytes of dynamic workgroup storage for these arguments; the backend gives this kernel at most %d", ErrArgument, storage, ck.maxStorage)
	}
	l.WorkgroupStorage = int(storage)
	if ck.info.Static && l.WorkgroupSize != ck.info.WorkgroupSize { // a bug, not a caller's mistake
		return nil, fmt.Errorf("%w: workgroup size %v, compiled with %v (internal error)", ErrArgument, l.WorkgroupSize, ck.info.WorkgroupSize)
	}
	// A sanitized session exists to have the executor report bad
	// accesses, out-of-bounds ones included, as events (it checks every
	// access against the bound bytes, so nothing is corrupted): extents
	// are left to it there.
	sanitized := s.opts.Sanitize.Races || s.opts.Sanitize.GlobalRaces
	for _, e := range ck.extents {
		if e.Bytes == nil || sanitized {
			continue
		}
		need, err := e.Bytes.Eval(env)
		if err != nil {
			return nil, fmt.Errorf("%w: the views over %%%s span a byte count that cannot be computed for these arguments: %w", ErrArgument, e.Param.Name, err)
		}
		if have := sd.args[e.Index].binding.Region.n; uint64(need.Int) > uint64(have) {
			return nil, fmt.Errorf("%w: buffer %%%s holds %d bytes; the kernel's views span %d bytes for these arguments", ErrArgument, e.Param.Name, have, uint64(need.Int))
		}
	}
	for _, u := range ck.storage {
		for _, e := range []*loom.Expr{u.Bytes, u.Views} {
			if e == nil {
				continue
			}
			need, err := e.Eval(env)
			if err != nil {
				return nil, fmt.Errorf("%w: kernel.workgroup.storage at %s: %w", ErrArgument, u.Op.Pos, err)
			}
			if need.Int < 0 || need.Int > storage {
				return nil, fmt.Errorf("%w: kernel.workgroup.storage at %s needs %d bytes; the launch provides %d for these arguments", ErrArgument, u.Op.Pos, need.Int, storage)
			}
		}
	}
	if p, ok := s.be.(launchPacker); ok {
		if sd.packed, err = p.packLaunch(l); err != nil {
			if errors.Is(err, ErrCompile) { // JIT of the build for misaligned buffers
				return nil, fmt.Errorf("packing the launch: %w", err)
			}
			return nil, fmt.Errorf("%w: packing the launch: %w", ErrArgument, err)
		}
	}
	return sd, nil
}

// env is the evaluation environment of a dispatch: the workload and launch
// arguments as Loom constants, the compiled config and target. Arguments
// were kind-checked by packArgs (launch) or are checked here (workload).
func (ck *compiledKernel) env(workload, args []Arg) (*loom.Env, error) {
	k := ck.kern
	if len(workload) != len(k.Workload) {
		return nil, fmt.Errorf("%w: %d workload arguments, its workload signature has %d", ErrArgument, len(workload), len(k.Workload))
	}
	consts := make([]loom.Const, len(workload)+len(args))
	env := &loom.Env{Config: ck.config, Target: ck.target, Workload: consts[:len(workload):len(workload)], Launch: consts[len(workload):]}
	for i, v := range k.Launch {
		if k := args[i].kind; k != argBuffer && k != argVector {
			env.Launch[i] = argConst(&args[i], v.Type)
		}
	}
	for i, v := range k.Workload {
		kind, _, err := scalarKind(v.Type, ck.target)
		if err != nil || kind == argBuffer {
			return nil, fmt.Errorf("%w: workload parameter %%%s has type %s, which the runtime cannot pass", ErrArgument, v.Name, v.Type)
		}
		a := &workload[i]
		if a.kind != kind {
			return nil, fmt.Errorf("%w: workload parameter %%%s (#%d) is %s, got %s", ErrArgument, v.Name, i, v.Type, a.kind)
		}
		env.Workload[i] = argConst(a, v.Type)
		// One name in both signatures is one parameter of the bindings: a
		// grid computed from one value must not launch the other.
		for j, lv := range k.Launch {
			if lv.Name == v.Name && args[j].kind == a.kind && args[j].val != a.val {
				return nil, fmt.Errorf("%w: %%%s is %v in the workload arguments but %v in the launch arguments", ErrArgument, v.Name, *a, args[j])
			}
		}
	}
	return env, nil
}

// argConst is scalar a as a Loom constant of type t (a's kind matches t).
func argConst(a *Arg, t *loom.Type) loom.Const {
	c := loom.Const{Type: t}
	switch a.kind {
	case argF16:
		c.Float = float64(F16(a.val).Float32())
	case argBF16:
		c.Float = float64(BF16(a.val).Float32())
	case argF32:
		c.Float = float64(math.Float32frombits(uint32(a.val)))
	case argF64:
		c.Float = math.Float64frombits(a.val)
	case argI8:
		c.Int = int64(int8(a.val))
	case argI16:
		c.Int = int64(int16(a.val))
	case argI32:
		c.Int = int64(int32(a.val))
	default: // index, offset, i1, i64: the full value
		c.Int = int64(a.val)
	}
	return c
}

// ConstArg is the Arg that passes constant c, by its Loom type: for tools
// that hold workload or launch values as loom.Const.
func ConstArg(c loom.Const) (Arg, error) {
	if c.Type == nil {
		return Arg{}, fmt.Errorf("%w: constant without a type", ErrArgument)
	}
	kind, _, err := scalarKind(c.Type, loom.Target{})
	if err != nil || kind == argBuffer {
		return Arg{}, fmt.Errorf("%w: a %s constant is not a scalar argument", ErrArgument, c.Type)
	}
	switch kind {
	case argF16:
		return F16Arg(F16From(float32(c.Float))), nil
	case argBF16:
		return BF16Arg(BF16From(float32(c.Float))), nil
	case argF32:
		return F32(float32(c.Float)), nil
	case argF64:
		return F64(c.Float), nil
	case argI1:
		return I1(c.Int != 0), nil
	case argI8:
		return I8(int8(c.Int)), nil
	case argI16:
		return I16(int16(c.Int)), nil
	case argI32:
		return I32(int32(c.Int)), nil
	case argI64:
		return I64(c.Int), nil
	case argOffset:
		return Offset(uint64(c.Int)), nil
	}
	return Index(int(c.Int)), nil
}

// checkNoalias refuses a dispatch that binds a parameter the kernel puts
// under buffer.assume.noalias over the bytes of another buffer binding of
// the same dispatch when either of the two is written. Both bindings
// passed packArgs, so their regions are valid allocations of the session.
func checkNoalias(ck *compiledKernel, args []Arg) error {
	for _, i := range ck.noalias {
		if i >= len(args) || args[i].kind != argBuffer {
			continue
		}
		a := &args[i].binding
		for j := range args {
			if j == i || args[j].kind != argBuffer {
				continue
			}
			b := &args[j].binding
			if a.Region.alloc != b.Region.alloc || a.Region.n == 0 || b.Region.n == 0 ||
				a.Region.off >= b.Region.off+b.Region.n || b.Region.off >= a.Region.off+a.Region.n ||
				!a.Access.Writes() && !b.Access.Writes() {
				continue
			}
			p, q := ck.info.Params[i], ck.info.Params[j]
			return fmt.Errorf("%w: kernel %s: %%%s (bytes %d–%d, %s) is under buffer.assume.noalias but overlaps %%%s (bytes %d–%d of the same allocation, %s)",
				ErrAliasing, ck.info.Export, p.Name, a.Region.off, a.Region.off+a.Region.n, a.Access, q.Name, b.Region.off, b.Region.off+b.Region.n, b.Access)
		}
	}
	return nil
}
