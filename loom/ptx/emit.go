package ptx

import (
	"fmt"
	"sort"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// val is what an SSA value lowers to: a scalar in one register, a buffer
// (base address and state space) or a view (base, element type, dims and
// element strides per axis).
type val struct {
	t   *loom.Type
	reg string // scalar register, or the base address of a buffer/view
	// known marks an integer (index, offset, iN) whose value is a
	// compile-time constant, in ci.
	known bool
	ci    int64
	// space is the state space of a buffer or view: global, shared or local.
	space   string
	elem    *loom.Type
	dims    []*val
	strides []*val // element strides per axis (index values)
	// vec holds a vector's components in row-major lane order (a vector
	// is scalarized: one register per component); shape is its dims.
	vec   []*val
	shape []int64
	// p2 is a power of two known to divide an integer value (0 or 1:
	// nothing known); vector memory ops use it to prove alignment.
	p2 int64
	// mag bounds a 32-bit integer: its value lies in [-2^mag, 2^mag) (in
	// [0, 2^mag) when nonneg), for mag > 0; shifts, masks and extensions
	// set it, int-to-float conversions use it.
	mag    int
	nonneg bool
	// align is a power of two the address of a buffer or view is known to
	// be a multiple of, given alignPred (when set) holds at run time.
	align     int64
	alignPred string
	// nat is a power of two the address of a buffer or view is always a
	// multiple of (0: nothing known); scalar accesses test their address
	// at run time when it is below the element size (unaligned.go).
	nat int64
	// ro marks a buffer parameter the kernel only reads (by the access
	// analysis, exactly); nc a buffer or view under buffer.assume.noalias
	// of such a parameter: no one writes its memory while the kernel runs,
	// so its loads may take the non-coherent path (ld.global.nc), which
	// ptxas may also move above stores (cache.go).
	ro, nc bool
	// wide marks an index that may lie in [2^31, 2^32): Loom's 32-bit
	// index carrier holds such non-negative values unsigned (LOOM.md
	// 6.1), so it widens by zero extension, and ops that would read it
	// signed refuse it (wideIndexOK).
	wide bool
	// swz is the row pitch in bytes of a view of a swizzled workgroup
	// tile (swizzle.go), 0 for a row-major view.
	swz int64
	// word, when set, names a 32-bit register whose bits wordShift… this
	// integer's low bits are (a right shift of it, or an i8 truncation of
	// one): vector.dot4i then passes the word to dp4a instead of packing
	// its byte lanes again. Registers are written once, except join
	// registers, which change only at a yield, after every use of a value
	// defined in the same region.
	word      string
	wordShift int
	// exact, when set, is a non-wide integer this one equals shifted
	// right by exactShift with no bits lost (a multiple of 2^exactShift,
	// shifted or divided by it): an address scaling this value by a
	// multiple of 2^exactShift scales exact instead, one shift fewer, and
	// a constant added to exact stays visible to ptxas as an offset. The
	// register-lifetime argument of word applies.
	exact      *val
	exactShift int
	// aff, when set, says this index equals aff.base + aff.off for a
	// small constant off (addr.go): addresses sum the constant parts
	// apart, so indices a constant apart share their register part.
	aff *affineIndex
	// field, when set, says this i32 is a run of bits of a register
	// (bitfield.go).
	field *bitField
	// zeros are bits of an i32 known to be 0; mul, when set, says it is
	// a multiple of another value (bitfield.go).
	zeros uint32
	mul   *multiple
	// frag marks a vector holding a subgroup matrix fragment in the
	// tensor cores' register layout (fragment.go); vec then holds those
	// registers, not Loom's payload components.
	frag *nativeFrag
}

// emitter lowers one kernel.
type emitter struct {
	prog *loom.Program
	k    *loom.Kernel
	cfg  map[string]loom.Const
	sm   int
	// bound is the alignment Dispatch enforces for each buffer parameter,
	// by launch index (boundAlignments); a missing entry enforces none.
	bound map[int]int64
	// loops counts the scf.for/scf.while bodies being lowered (hoist.go
	// moves loads only outside them).
	loops int

	body   strings.Builder
	nreg   [numClasses]int
	vals   map[*loom.Value]*val
	labels int
	// statics are the .shared/.local array declarations of the entry.
	statics    []string
	sharedSize int
	// dynAlign is the alignment of the dynamic shared memory the entry
	// takes (kernel.workgroup.storage), 0 when it takes none.
	dynAlign int64
	// wg is the static workgroup size, when the launch config gives one.
	wg      [3]int64
	wgKnown bool
	// ops counts the ops emitted, against loom.MaxCompiledOps.
	ops int
	// calls is the inline stack, to refuse recursion.
	calls []string
	// frame is the innermost inlined call, receiving func.return values.
	frame *inlineFrame
	cur   *loom.Op
	// providers records the template provider each apply resolved to.
	providers []string
	// scratchBytes is the size of the collectives' shared scratch.
	scratchBytes int
	// lane holds the warp-lane values fragment lowering uses, computed
	// once at entry (fragment.go); nil when the kernel has no fragments.
	lane *laneRegs
	// wave is the invocations a subgroup fragment spans (fragWave).
	wave int
	// allocas records the body's allocations in emission order; while
	// allocaReplay is non-nil, the second version of the body takes them
	// from it instead of declaring new ones (version.go).
	allocas, allocaReplay []allocaDecl
	// versionOn holds the entry alignment predicates (alignBufferParam)
	// under which some element access that now tests its address would be
	// proven naturally aligned: the body is versioned on them too.
	versionOn map[string]bool
	// alignedBody is the body of the aligned version alone (no entry test,
	// no fallback) when bodyVersions versioned the kernel, else "";
	// alignedParams are the launch parameters its predicates test.
	alignedBody   string
	alignedParams []int
	// swz maps the views of swizzled workgroup tiles to their row pitch
	// in bytes (swizzle.go).
	swz map[*loom.Value]int64
	// frontSweeps records that a sweep trip issues its copies' loads
	// first (sweepFront): the entry then states sweepRegs.
	frontSweeps bool
	// wgp is the kernel's wgmma groups (wgmma.go), nil for none; wgPending
	// records wgmma ops in flight, wgUsed that one was emitted (the
	// target is then sm_90a); carried marks the scf.for bodies whose
	// arguments are loop registers of their own.
	wgp       *wgmmaPlan
	wgPending bool
	wgTiles   []*loom.Value // the rhs tiles of the wgmma ops not yet committed
	wgGroups  []wgmmaBatch  // the committed groups possibly in flight, oldest first
	wgUsed    bool
	// isa is the PTX ISA version (times ten) an instruction emitted so far
	// needs beyond the target's own (0: none); target declares the larger.
	isa int
	// emitted counts the instructions and labels written so far; wgChain
	// is its value just after the last wgmma.mma_async (wgmma.go), whose
	// group had wgChainN members.
	emitted, wgChain, wgChainN int
	carried                    map[*loom.Region]bool
	// deferred marks the loop-ending waits that leave their group in
	// flight into the next trip, and deferredAt the barriers that then
	// wait for it, with the groups newer than it (async_defer.go).
	deferred   map[*loom.Op]bool
	deferredAt map[*loom.Op]int
	// allocaAtomsFit records that the kernel's workgroup allocations
	// may be declared on wgmma atom boundaries (wgmma.go).
	allocaAtomsFit bool
}

// inlineFrame collects the results of an inlined call.
type inlineFrame struct {
	results []*val
	types   []*loom.Type
	done    string // label after the inlined body
	// tail: the body's one func.return is its last op, so the returned
	// values become the call's results as they are (no join registers:
	// what the emitter knows of them, such as a byte vector's source word
	// for dp4a, stays known to the caller).
	tail *loom.Op
}

func newEmitter(p *loom.Program, k *loom.Kernel, cfg map[string]loom.Const, sm int) *emitter {
	return &emitter{prog: p, k: k, cfg: cfg, sm: sm, vals: map[*loom.Value]*val{}}
}

func (e *emitter) curPos() loom.Pos {
	if e.cur != nil {
		return e.cur.Pos
	}
	if e.k.Op != nil {
		return e.k.Op.Pos
	}
	return loom.Pos{}
}

func (e *emitter) curName() string {
	if e.cur != nil {
		return e.cur.Name
	}
	return "kernel @" + e.k.Symbol
}

// ins appends one instruction line.
func (e *emitter) ins(format string, args ...any) {
	e.emitted++
	e.body.WriteByte('\t')
	fmt.Fprintf(&e.body, format, args...)
	e.body.WriteString(";\n")
}

// label places a label.
func (e *emitter) label(l string) {
	e.emitted++
	e.body.WriteString(l + ":\n")
}

// newLabel returns a fresh label with a readable stem.
func (e *emitter) newLabel(stem string) string {
	e.labels++
	return fmt.Sprintf("$L_%s_%d", stem, e.labels)
}

// newReg returns a fresh virtual register of class c.
func (e *emitter) newReg(c class) string {
	n := e.nreg[c]
	e.nreg[c]++
	return fmt.Sprintf("%s%d", classPrefix[c], n)
}

// newVal returns a fresh scalar value of type t.
func (e *emitter) newVal(t *loom.Type) *val { return &val{t: t, reg: e.newReg(classOf(t))} }

// entryName makes an export name a PTX identifier.
func entryName(export string) string {
	var b strings.Builder
	for i, r := range export {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r == '$':
			b.WriteRune(r)
		case r >= '0' && r <= '9' && i > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

func (e *emitter) compile() (*Kernel, error) {
	k := e.k
	if k.Body == nil {
		return nil, invalid(k.Op.Pos, "kernel @%s has no body", k.Symbol)
	}
	e.staticWorkgroupSize()
	if wg := e.wg; e.wgKnown && (wg[0]*wg[1]*wg[2] > 1024 || wg[2] > 64) {
		// The driver refuses the launch (CUDA_ERROR_INVALID_VALUE): say
		// so at compile time, as for any other unsupported construct.
		return nil, fmt.Errorf("%s: %w: workgroup size %d×%d×%d: NVIDIA GPUs run at most 1024 invocations per workgroup (z at most 64)",
			k.Op.Pos, ErrUnsupported, wg[0], wg[1], wg[2])
	}
	out := &Kernel{Entry: entryName(k.Export)}
	var params []string
	var aligned []*val   // buffer parameters with a run-time alignment predicate
	var alignedIdx []int // their launch parameter indices
	vecMem := usesVectorMemory(e.prog, k.Body, map[string]bool{})
	// Dispatch binds each buffer at a multiple of its views' element size.
	bindAlign := map[int]int64{}
	readOnly := map[int]bool{}
	for _, a := range e.prog.Access(k) {
		// No more than Dispatch enforces (boundAlignments).
		bindAlign[a.Index] = min(int64(a.Alignment()), max(e.bound[a.Index], 1))
		// A read found in a called function's body is as certain as one in
		// the kernel's; only an opaque use (conservative) is not.
		readOnly[a.Index] = a.Access == loom.AccessRead && a.Basis != loom.BasisConservative
	}
	launch := k.Launch
	if len(k.Body.Args) == len(launch) {
		launch = k.Body.Args
	}
	for i, p := range launch {
		if p.Type == nil {
			return nil, invalid(p.Pos, "launch parameter %%%s has no type", p.Name)
		}
		pname := fmt.Sprintf("%s_param_%d", out.Entry, i)
		var v *val
		switch p.Type.Kind {
		case loom.TypeBuffer, loom.TypeView:
			params = append(params, ".param .u64 "+pname)
			out.Params = append(out.Params, Param{Name: p.Name, Size: 8, Align: 8, Buffer: true})
			raw := e.newReg(cRd)
			e.ins("ld.param.u64 %s, [%s]", raw, pname)
			v = &val{t: p.Type, reg: e.newReg(cRd), space: "global", nat: bindAlign[i], ro: readOnly[i]}
			e.ins("cvta.to.global.u64 %s, %s", v.reg, raw)
			if vecMem || bindAlign[i] == 1 {
				// bindAlign 1: views of several element sizes, whose
				// element accesses test their addresses unless the body
				// is versioned on this predicate (noteGuard).
				e.alignBufferParam(v)
				aligned = append(aligned, v)
				alignedIdx = append(alignedIdx, i)
			}
		case loom.TypeVector:
			var decl string
			var prm Param
			var err error
			if v, decl, prm, err = e.vectorParam(p, pname); err != nil {
				return nil, err
			}
			params = append(params, decl)
			out.Params = append(out.Params, prm)
		default:
			if !p.Type.IsScalar() {
				return nil, fmt.Errorf("%s: %w: launch parameter %%%s of type %s", p.Pos, ErrUnsupported, p.Name, p.Type)
			}
			size := carrierBytes(p.Type)
			ptype := paramType(p.Type)
			params = append(params, fmt.Sprintf(".param .%s %s", ptype, pname))
			out.Params = append(out.Params, Param{Name: p.Name, Size: size, Align: size})
			v = e.newVal(p.Type)
			if classOf(p.Type) == cPred {
				t := e.newReg(cR)
				e.ins("ld.param.u8 %s, [%s]", t, pname)
				e.ins("setp.ne.b32 %s, %s, 0", v.reg, t)
			} else {
				e.ins("ld.param.%s %s, [%s]", ldType(p.Type), v.reg, pname)
			}
		}
		e.vals[p] = v
		if i < len(k.Launch) {
			e.vals[k.Launch[i]] = v
		}
	}
	e.launchFacts()
	if usesOps(e.prog, k.Body, fragmentOps, map[string]bool{}) {
		e.lane = e.laneRegisters()
	}
	// View parameters take their dims from the types, which may name
	// other parameters: bind them once every parameter has a register.
	for _, p := range launch {
		if p.Type.Kind == loom.TypeView {
			v := e.vals[p]
			if err := e.shapeView(v, p.Type, p.Pos); err != nil {
				return nil, err
			}
		}
	}
	e.swz = swizzledViews(k.Body, e.sm, e.fragWave())
	if e.wgp = e.planWgmma(k.Body); e.wgp != nil {
		e.dynAlign = max(e.dynAlign, wgmmaAtomBytes)
	}
	if err := e.bodyVersions(k.Body, aligned, alignedIdx); err != nil {
		return nil, err
	}
	if e.scratchBytes > 0 {
		e.statics = append(e.statics, fmt.Sprintf(".shared .align 8 .b8 %s[%d]", collScratch, e.scratchBytes))
		e.sharedSize = (e.sharedSize+7)/8*8 + e.scratchBytes
	}
	out.WorkgroupStorageBytes = e.sharedSize
	out.Providers = e.providers
	if e.wgKnown {
		out.WorkgroupSize = e.wg
		if n := regCap(e.wg[0] * e.wg[1] * e.wg[2]); n < 255 {
			out.MaxRegs = int(n)
		}
	}
	out.WaitsForPredecessors = e.sm >= 90
	out.PTX = e.module(out.Entry, params, e.body.String())
	if e.alignedBody != "" {
		out.AlignedPTX = e.module(out.Entry, params, e.alignedBody)
		out.AlignedParams = e.alignedParams
	}
	return out, nil
}

// staticWorkgroupSize evaluates the launch config's workgroup size when it
// depends on no workload argument; collectives size their scratch by it.
func (e *emitter) staticWorkgroupSize() {
	l, err := e.prog.LaunchExprs(e.k)
	if err != nil {
		return
	}
	env := &loom.Env{Config: e.cfg, Target: loom.TargetGPU}
	for ax := 0; ax < 3; ax++ {
		c, err := l.WorkgroupSize[ax].Eval(env)
		if err != nil || c.Int <= 0 {
			return
		}
		e.wg[ax] = c.Int
	}
	e.wgKnown = true
}

// regCap is the most registers an invocation of a workgroup of n
// invocations can have with the workgroup resident on one SM, at most 255.
// An SM's 64K registers are four sub-partitions of 16K; its warps are
// spread over them, so the fullest holds ⌈warps/4⌉ warps, and registers
// are granted per invocation in multiples of 8. Above it the launch fails
// for want of registers (Kernel.MaxRegs says why it matters).
func regCap(n int64) int64 {
	warps := (n + 31) / 32
	if warps <= 0 {
		return 255
	}
	perPart := (warps + 3) / 4
	return min(255, 16384/(perPart*32)/8*8)
}

// target is the module's .target and .version. The target is the newest
// of sm_80, 86, 87, 89 and 90 at or below the device's: the generator
// uses nothing newer than sm_90, and the driver JIT-compiles PTX for an
// older target on any newer GPU, where naming the GPU's own target
// (sm_100, sm_120) would need an ISA version from a newer CUDA. 7.8, the
// first ISA with sm_89 and sm_90, holds every instruction the generator
// emits but Hopper's warpgroup ones (wgmma and fence.proxy.async), which
// need 8.0 and exactly sm_90a. Declaring no more than that lets any
// driver from CUDA 11.8's on JIT the module and any ptxas from 11.8 on
// check it.
func (e *emitter) target() (target, version string) {
	isa := max(78, e.isa)
	if e.wgUsed {
		return "sm_90a", isaString(max(80, isa)) // wgmma is only chosen for sm_90
	}
	t := 80
	for _, s := range []int{86, 87, 89, 90} {
		if s <= e.sm {
			t = s
		}
	}
	return fmt.Sprintf("sm_%d", t), isaString(isa)
}

// isaString writes an ISA version times ten as PTX spells it.
func isaString(v int) string { return fmt.Sprintf("%d.%d", v/10, v%10) }

// module assembles the PTX text.
func (e *emitter) module(entry string, params []string, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "//\n// Generated by loomgen loom/ptx from kernel @%s (export %q).\n//\n\n", e.k.Symbol, e.k.Export)
	target, version := e.target()
	fmt.Fprintf(&b, ".version %s\n.target %s\n.address_size 64\n\n", version, target)
	if e.dynAlign > 0 {
		fmt.Fprintf(&b, ".extern .shared .align %d .b8 %s[];\n\n", e.dynAlign, dynSmem)
	}
	fmt.Fprintf(&b, ".visible .entry %s(", entry)
	for i, p := range params {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n\t" + p)
	}
	b.WriteString("\n)\n")
	if e.wgKnown {
		fmt.Fprintf(&b, ".reqntid %d, %d, %d\n", e.wg[0], e.wg[1], e.wg[2])
		if e.frontSweeps {
			fmt.Fprintf(&b, ".maxnreg %d\n", min(sweepRegs, regCap(e.wg[0]*e.wg[1]*e.wg[2])))
		}
	}
	b.WriteString("{\n")
	for c := class(0); c < numClasses; c++ {
		if e.nreg[c] > 0 {
			fmt.Fprintf(&b, "\t.reg .%s %s<%d>;\n", classDecl[c], classPrefix[c], e.nreg[c])
		}
	}
	statics := append([]string(nil), e.statics...)
	sort.Strings(statics)
	for _, s := range statics {
		b.WriteString("\t" + s + ";\n")
	}
	b.WriteString("\n")
	body = coalesce(dropTrailingBarriers(body))
	if e.sm >= 90 {
		body = withEntryWait(body)
	}
	b.WriteString(body)
	b.WriteString("}\n")
	return b.String()
}

// region lowers the ops of a region in order, but for the read-only
// loads hoist.go issues early and adjacent workgroup reductions, which
// share their barriers (workgroupReduces).
func (e *emitter) region(r *loom.Region) error {
	early := e.planHoists(r)
	moved := map[int]bool{}
	for i, op := range r.Ops {
		for _, j := range early[i] {
			if !e.hoistable(r.Ops[j]) {
				continue
			}
			e.cur = r.Ops[j]
			if err := e.op(r.Ops[j]); err != nil {
				return err
			}
			moved[j] = true
		}
		if moved[i] {
			continue
		}
		e.wgmmaBefore(op)
		k, err := e.reduceGroup(r.Ops[i:])
		if err != nil {
			return err
		}
		if k > 0 {
			for j := i + 1; j < i+k; j++ {
				moved[j] = true
			}
			continue
		}
		e.cur = op
		if err := e.op(op); err != nil {
			return err
		}
	}
	e.wgmmaFlush()
	return nil
}

// get returns the lowering of an operand.
func (e *emitter) get(o *loom.Operand) (*val, error) {
	if o == nil {
		return nil, invalid(e.curPos(), "missing operand")
	}
	if o.Lit != nil {
		if o.Lit.Kind != loom.LitInt {
			return nil, invalid(o.Pos, "literal operand %s is not an integer", o.Lit.Text)
		}
		return e.constInt(indexType, o.Lit.Int), nil
	}
	if o.Value == nil {
		return nil, invalid(o.Pos, "%%%s is not defined", o.Name)
	}
	v, ok := e.vals[o.Value]
	if !ok {
		return nil, invalid(o.Pos, "%%%s has no lowering here (defined at %s)", o.Name, o.Value.Pos)
	}
	if v.frag != nil && e.cur != nil && !fragAware[e.cur.Name] {
		return e.materialize(e.cur, v)
	}
	return v, nil
}

// operands returns the lowerings of ops's operands from index from on.
func (e *emitter) operands(op *loom.Op, from int) ([]*val, error) {
	var out []*val
	for _, o := range op.Operands[from:] {
		v, err := e.get(o)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// need checks the operand count of op.
func need(op *loom.Op, n int) error {
	if len(op.Operands) < n {
		return invalid(op.Pos, "%s takes %d operands, has %d", op.Name, n, len(op.Operands))
	}
	return nil
}

// define binds result i of op.
func (e *emitter) define(op *loom.Op, i int, v *val) error {
	if i >= len(op.Results) {
		if i == 0 && len(op.Results) == 0 {
			return nil // a result-less use of a value op is harmless
		}
		return invalid(op.Pos, "%s has no result %d", op.Name, i)
	}
	e.vals[op.Results[i]] = v
	return nil
}

// resultType is the type of result i of op.
func resultType(op *loom.Op, i int) *loom.Type {
	if i < len(op.Results) && op.Results[i].Type != nil {
		return op.Results[i].Type
	}
	if i < len(op.ResultTypes) {
		return op.ResultTypes[i]
	}
	if len(op.Types) > 0 {
		return op.Types[len(op.Types)-1]
	}
	return nil
}

// op lowers one operation.
func (e *emitter) op(op *loom.Op) error {
	if e.ops++; e.ops > loom.MaxCompiledOps {
		return unsupported(op, "the kernel compiles to more than %d operations (each inlined call's body and each unrolled loop trip count every time%s): too large to lower to PTX", loom.MaxCompiledOps, loom.CallChain(e.calls))
	}
	e.wgmmaBefore(op)
	if loom.LayoutOnly(op) {
		return nil // only view types use it (loom.DenseLayout)
	}
	if op.Refused != "" {
		// The shared lowering's reason names the op already.
		return fmt.Errorf("%s: %w: %s", op.Pos, ErrUnsupported, op.Refused)
	}
	if isAsyncOp(op.Name) {
		return e.async(op)
	}
	if op.Opaque {
		return unsupported(op, "op is not lowered to PTX")
	}
	dialect, rest, _ := strings.Cut(op.Name, ".")
	switch dialect {
	case "index", "scalar":
		return e.arith(op, rest)
	case "config":
		if rest == "get" {
			return e.configGet(op)
		}
	case "target":
		if rest == "subgroup.size" {
			return e.define(op, 0, e.constInt(resultType(op, 0), 32))
		}
	case "scf":
		return e.control(op, rest)
	case "func", "template":
		return e.call(op, rest)
	case "kernel":
		return e.kernelOp(op, rest)
	case "buffer", "view":
		return e.memory(op, rest)
	case "vector":
		return e.vector(op, rest)
	}
	return unsupported(op, "op is not lowered to PTX")
}

// configGet folds a config value into a constant.
func (e *emitter) configGet(op *loom.Op) error {
	t := resultType(op, 0)
	c, ok := e.cfg[op.Symbol]
	if !ok {
		return invalid(op.Pos, "config.get @%s: no value supplied (Options.Config or config.def)", op.Symbol)
	}
	if t == nil || !t.IsScalar() {
		return unsupported(op, "config value of type %s", t)
	}
	if t.Kind == loom.TypeFloat {
		return e.define(op, 0, e.constFloat(t, c.Float))
	}
	return e.define(op, 0, e.constInt(t, c.Int))
}

// vectorParam declares a vector launch parameter as a byte array holding
// its lanes little-endian at their element size (as the CPU executor takes
// them from Arg.Buffer) and loads every lane.
func (e *emitter) vectorParam(p *loom.Value, pname string) (*val, string, Param, error) {
	t := p.Type
	n := 1
	for _, d := range t.Dims {
		if d.Value != nil || d.Size <= 0 {
			return nil, "", Param{}, fmt.Errorf("%s: %w: launch parameter %%%s of type %s (a vector parameter needs a static lane count)", p.Pos, ErrUnsupported, p.Name, t)
		}
		n *= int(d.Size)
	}
	if t.Elem == nil || !t.Elem.IsScalar() || n > 64 {
		return nil, "", Param{}, fmt.Errorf("%s: %w: launch parameter %%%s of type %s (vector parameters of up to 64 scalar lanes are passed)", p.Pos, ErrUnsupported, p.Name, t)
	}
	size := carrierBytes(t.Elem)
	shape := make([]int64, len(t.Dims))
	for i, d := range t.Dims {
		shape[i] = d.Size
	}
	lanes := make([]*val, n)
	for i := range lanes {
		c := e.newVal(t.Elem)
		if classOf(t.Elem) == cPred {
			r := e.newReg(cR)
			e.ins("ld.param.u8 %s, [%s+%d]", r, pname, i*size)
			e.ins("setp.ne.b32 %s, %s, 0", c.reg, r)
		} else {
			e.ins("ld.param.%s %s, [%s+%d]", ldType(t.Elem), c.reg, pname, i*size)
		}
		lanes[i] = c
	}
	decl := fmt.Sprintf(".param .align %d .b8 %s[%d]", size, pname, n*size)
	return vecVal(t, shape, lanes), decl, Param{Name: p.Name, Size: n * size, Align: size}, nil
}
