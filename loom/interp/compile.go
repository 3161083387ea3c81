package interp

import (
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// compiler turns one kernel body, with its inlined callees, into code.
type compiler struct {
	k        *Kernel
	funcs    map[string]*loom.Func
	families map[string][]*loom.Func
	config   map[string]loom.Const
	defs     map[string]*loom.ConfigDef
	// calls is the chain of functions being inlined, to refuse recursion.
	calls []string
	// ops counts the ops compiled, against loom.MaxCompiledOps.
	ops int
	// site numbers the chain of call ops being inlined (0: the kernel
	// body itself; sites interns them): with a loop op it names one
	// instance of the loop in the inlined code.
	site  int
	sites map[callSite]int
	// carried holds, per loop instance, which carried values its latest
	// compile found uniform (loopHint).
	carried map[loopInstance][]bool
	// condOnly names values used only as scf.if conditions.
	condOnly map[string]bool
	// uses counts the operand uses of each SSA name per top-level op,
	// keyed by every op inside it (fuse.go).
	uses map[*loom.Op]map[string]int
	// metaRegs and lazyCands feed markLazy (lazy.go).
	metaRegs  []metaReg
	lazyCands []lazyCand
	// inv holds the group-invariant registers of the kernel body and
	// hoist marks its top-level instructions computing them (hoist.go).
	inv   map[*slot]bool
	hoist []bool
	// ifs holds the latest compile of each scf.if with a varying
	// condition, for rangeIf to run its regions (rangeif.go).
	ifs map[*loom.Op]*ifCode
	// roots, read and written trace which buffer parameters memory
	// accesses reach (rerun.go).
	roots         map[*slot]uint64
	read, written uint64
	// wgv marks, in a batched form, views that reach workgroup memory
	// (batchwg.go).
	wgv map[*slot]bool
	// hasWG caches allocatesWG: 0 unknown, 1 no, 2 yes.
	hasWG int8
	// wgSlow counts accesses that may reach workgroup memory and run
	// lane by lane in a batch (Kernel.wgFast).
	wgSlow int
	// exits counts the lane-ending ops compiled so far (kernel.exit, a
	// nested kernel.return): a region whose compile left it unchanged
	// never clears mask lanes in place (runRange).
	exits int
	// unsigned marks fragment registers loaded as unsigned integers
	// (fragment.go).
	unsigned map[*slot]bool
}

// scope maps SSA names to slots; regions nest scopes, each inlined call
// starts a fresh chain (function bodies are isolated from above).
type scope struct {
	parent *scope
	vals   map[string]*slot
}

func newScope(parent *scope) *scope { return &scope{parent: parent, vals: map[string]*slot{}} }

// lookup finds name in s or the nearest scope above it. A name found more
// than two scopes up is remembered in the scopes between, so that lookups
// from deeply nested regions do not walk the whole chain every time (which
// made compiling n nested loops cubic in n). That is sound because the
// resolver refuses a name defined twice anywhere in a chain of scopes: a
// binding seen from below never changes.
func (s *scope) lookup(name string) *slot {
	if v, ok := s.vals[name]; ok {
		return v
	}
	steps := 0
	for p := s.parent; p != nil; p = p.parent {
		steps++
		if v, ok := p.vals[name]; ok {
			if steps > 2 {
				for q := s; q != p; q = q.parent {
					q.vals[name] = v
				}
			}
			return v
		}
	}
	return nil
}

// block is the compile context of one region: its scope, its control-flow
// depth (which scratch mask nested control flow uses) and what its
// terminator does.
type block struct {
	sc    *scope
	depth int
	// term compiles the region's terminator (scf.yield, scf.condition,
	// func.return, template.return); nil means none is expected.
	term func(op *loom.Op, vals []*slot) (instr, error)
	// inFunc is set inside an inlined function body.
	inFunc bool
	top    bool // the kernel body itself
}

func newCompiler(k *Kernel, mods []*loom.Module, opts Options) (*compiler, error) {
	c := &compiler{
		k:        k,
		funcs:    map[string]*loom.Func{},
		families: map[string][]*loom.Func{},
		config:   opts.Config,
		defs:     map[string]*loom.ConfigDef{},
		condOnly: condOnly(mods),
		uses:     useCounts(mods),
	}
	for _, m := range mods {
		if m == nil {
			continue
		}
		for _, f := range m.Funcs {
			if f.Family != "" && f.Body != nil {
				c.families[f.Family] = append(c.families[f.Family], f)
			}
			if prev, ok := c.funcs[f.Symbol]; ok {
				if prev.Body != nil && f.Body != nil {
					return nil, compileErr(f.Op.Pos, ErrInvalid, "@%s is also defined at %s", f.Symbol, prev.Op.Pos)
				}
				if prev.Body != nil {
					continue
				}
			}
			c.funcs[f.Symbol] = f
		}
		for _, d := range m.ConfigDefs {
			c.defs[d.Symbol] = d
		}
	}
	return c, nil
}

// state is a snapshot of the slot counters, restored when a loop body is
// compiled again with different uniformity assumptions.
type state struct {
	nslots, nI, nF, nV, nalloca int
	nmeta, ncand                int
}

func (c *compiler) save() state {
	k := c.k
	return state{len(k.slots), k.nI, k.nF, k.nV, len(k.allocas), len(c.metaRegs), len(c.lazyCands)}
}

func (c *compiler) restore(s state) {
	k := c.k
	k.slots, k.nI, k.nF, k.nV, k.allocas = k.slots[:s.nslots], s.nI, s.nF, s.nV, k.allocas[:s.nalloca]
	// Uses recorded by a discarded compile of a region must not count.
	c.metaRegs, c.lazyCands = c.metaRegs[:s.nmeta], c.lazyCands[:s.ncand]
}

// newSlot allocates a register for a value of type t.
func (c *compiler) newSlot(pos loom.Pos, t *loom.Type, uni bool) (*slot, error) {
	if t == nil {
		return nil, compileErr(pos, ErrInvalid, "value has no type")
	}
	s := &slot{uni: uni, comps: 1, typ: t}
	switch t.Kind {
	case loom.TypeInt, loom.TypeIndex, loom.TypeOffset:
		s.kind = kInt
	case loom.TypeFloat:
		if _, err := floatFormat(pos, t); err != nil {
			return nil, err
		}
		s.kind = kFloat
	case loom.TypeBuffer:
		s.kind = kView
	case loom.TypeView:
		if len(t.Dims) > maxRank {
			return nil, compileErr(pos, ErrUnsupported, "view of rank %d (at most %d)", len(t.Dims), maxRank)
		}
		if _, strided := loom.LayoutStrides(t); !loom.DenseLayout(t) && !strided {
			return nil, compileErr(pos, ErrUnsupported, "view layout %s (only dense and encoding.layout.strided views run on the CPU executor)", t.Layout)
		}
		s.kind = kView
	case loom.TypeVector:
		n := 1
		for _, d := range t.Dims {
			if d.Value != nil {
				return nil, compileErr(pos, ErrUnsupported, "vector with a dynamic dimension [%%%s]", d.Value.Name)
			}
			n *= int(d.Size)
		}
		if t.Elem == nil {
			return nil, compileErr(pos, ErrInvalid, "vector type without element type")
		}
		e, err := c.newSlot(pos, t.Elem, uni)
		if err != nil {
			return nil, err
		}
		if e.kind == kView {
			return nil, compileErr(pos, ErrUnsupported, "vector of %s", t.Elem)
		}
		c.k.slots = c.k.slots[:len(c.k.slots)-1] // drop the element probe
		if e.kind == kInt {
			c.k.nI--
		} else {
			c.k.nF--
		}
		s.kind, s.typ, s.comps, s.shape = e.kind, t.Elem, n, shapeOf(t)
		if n > c.k.maxComps {
			c.k.maxComps = n
		}
	default:
		return nil, compileErr(pos, ErrUnsupported, "values of type %s", t)
	}
	switch s.kind {
	case kInt:
		s.idx = c.k.nI
		c.k.nI++
	case kFloat:
		s.idx = c.k.nF
		c.k.nF++
	case kView:
		s.idx = c.k.nV
		c.k.nV++
	}
	c.k.slots = append(c.k.slots, s)
	return s, nil
}

// constInt makes a uniform int slot holding v.
func (c *compiler) constInt(pos loom.Pos, t *loom.Type, v int64) (*slot, error) {
	s, err := c.newSlot(pos, t, true)
	if err != nil {
		return nil, err
	}
	s.cst, s.ci = true, v
	return s, nil
}

// operand resolves an operand to its slot; inline literals become constants.
func (c *compiler) operand(b *block, o *loom.Operand, litType *loom.Type) (*slot, error) {
	if o.Lit != nil {
		if litType == nil {
			litType = typeIndex
		}
		if o.Lit.Kind != loom.LitInt {
			return nil, compileErr(o.Pos, ErrUnsupported, "literal operand %s", o.Lit.Text)
		}
		return c.constInt(o.Pos, litType, o.Lit.Int)
	}
	s := b.sc.lookup(o.Name)
	if s == nil {
		return nil, compileErr(o.Pos, ErrInvalid, "undefined value %%%s", o.Name)
	}
	return s, nil
}

func (c *compiler) operands(b *block, op *loom.Op) ([]*slot, error) {
	out := make([]*slot, len(op.Operands))
	for i, o := range op.Operands {
		s, err := c.operand(b, o, nil)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// operandsN is operands of an op that must have exactly n of them.
func (c *compiler) operandsN(b *block, op *loom.Op, n int) ([]*slot, error) {
	if err := arity(op, n); err != nil {
		return nil, err
	}
	return c.operands(b, op)
}

var typeIndex = &loom.Type{Kind: loom.TypeIndex, Name: "index"}
var typeI1 = &loom.Type{Kind: loom.TypeInt, Name: "i1", Bits: 1}
var typeI64 = &loom.Type{Kind: loom.TypeInt, Name: "i64", Bits: 64}

// bind defines op's result i as slot s.
func (c *compiler) bind(b *block, op *loom.Op, i int, s *slot) error {
	if i >= len(op.Results) {
		return nil
	}
	b.sc.vals[op.Results[i].Name] = s
	return nil
}

// result allocates the register of op's result i.
func (c *compiler) result(b *block, op *loom.Op, i int, uni bool) (*slot, error) {
	if i >= len(op.Results) {
		return nil, compileErr(op.Pos, ErrInvalid, "%s: missing result", op.Name)
	}
	v := op.Results[i]
	t := v.Type
	if t == nil && i < len(op.ResultTypes) {
		t = op.ResultTypes[i]
	}
	if t == nil && len(op.Types) > 0 {
		t = op.Types[0]
	}
	s, err := c.newSlot(op.Pos, t, uni)
	if err != nil {
		return nil, err
	}
	b.sc.vals[v.Name] = s
	return s, nil
}

func allUni(ss ...*slot) bool {
	for _, s := range ss {
		if !s.uni {
			return false
		}
	}
	return true
}

// compileKernel compiles the device body of kd.
func (c *compiler) compileKernel(kd *loom.Kernel) error {
	sc := newScope(nil)
	c.inv, c.hoist = map[*slot]bool{}, nil
	args := kd.Body.Args
	if len(args) == 0 {
		args = kd.Launch
	}
	for _, a := range args {
		s, err := c.newSlot(a.Pos, a.Type, true)
		if err != nil {
			return err
		}
		sc.vals[a.Name] = s
		c.k.params = append(c.k.params, s)
		c.inv[s] = true
		c.paramRoot(s, len(c.k.params)-1)
	}
	// View parameters' dynamic dims may name other parameters; Run builds
	// those views once the scalars are bound.
	c.k.pdims = make([][]*slot, len(args))
	b := &block{sc: sc, top: true}
	for i, a := range args {
		if _, strided := loom.LayoutStrides(a.Type); strided {
			return compileErr(a.Pos, ErrUnsupported, "view parameter %%%s with a strided layout (bind a buffer and view it)", a.Name)
		}
		if a.Type != nil && a.Type.Kind == loom.TypeView {
			ds, err := c.dimSlots(b, a.Type)
			if err != nil {
				return err
			}
			c.k.pdims[i] = ds
		}
	}
	code, err := c.region(b, kd.Body)
	if err != nil {
		return err
	}
	if c.k.san.on() {
		// The checked mode runs every op exactly, every group: no lazy
		// registers, nothing hoisted out of the workgroups.
		c.hoist = nil
	} else {
		c.markLazy()
	}
	c.k.rerunSafe = c.read&c.written == 0
	c.k.readRoots, c.k.writtenRoots = c.read, c.written
	c.k.code = code
	c.k.splitHoisted(code, c.hoist)
	return nil
}

// region compiles the ops of r in b's scope.
func (c *compiler) region(b *block, r *loom.Region) ([]instr, error) {
	var code []instr
	for i := 0; i < len(r.Ops); i++ {
		if !c.k.san.on() && c.fuseCandidate(r.Ops, i) {
			// Compile the four ops as usual (they define the names and
			// are the fallback), then try the fused form over them.
			var four []instr
			for j := i; j < i+4; j++ {
				in, err := c.op(b, r.Ops[j], j == len(r.Ops)-1)
				if err != nil {
					return nil, err
				}
				if in != nil {
					four = append(four, in)
				}
			}
			if f := c.fuse(b, r.Ops[i:i+4], four); f != nil {
				code = append(code, f)
			} else {
				code = append(code, four...)
			}
			i += 3
			continue
		}
		if !c.k.san.on() && c.rangeIfCandidate(r.Ops, i) {
			var two []instr
			var from []*loom.Op
			for j := i; j < i+2; j++ {
				in, err := c.op(b, r.Ops[j], j == len(r.Ops)-1)
				if err != nil {
					return nil, err
				}
				if in != nil {
					two, from = append(two, in), append(from, r.Ops[j])
				}
			}
			if f := c.rangeIf(b, r.Ops[i:i+2], two); f != nil {
				code = append(code, f)
			} else {
				// Unfused, the ops keep their hoisting as below.
				for j, in := range two {
					code = append(code, in)
					if b.top {
						for len(c.hoist) < len(code)-1 {
							c.hoist = append(c.hoist, false)
						}
						c.hoist = append(c.hoist, c.invariantOp(b, from[j]))
					}
				}
			}
			i++
			continue
		}
		if !c.k.san.on() && c.guardCandidate(r.Ops, i) {
			var two []instr
			for j := i; j < i+2; j++ {
				in, err := c.op(b, r.Ops[j], j == len(r.Ops)-1)
				if err != nil {
					return nil, err
				}
				if in != nil {
					two = append(two, in)
				}
			}
			if f := c.guard(b, r.Ops[i:i+2], two); f != nil {
				code = append(code, f)
			} else {
				code = append(code, two...)
			}
			i++
			continue
		}
		op := r.Ops[i]
		in, err := c.op(b, op, i == len(r.Ops)-1)
		if err != nil {
			return nil, err
		}
		if in != nil {
			code = append(code, in)
			if b.top {
				for len(c.hoist) < len(code)-1 {
					c.hoist = append(c.hoist, false) // fused steps
				}
				c.hoist = append(c.hoist, c.invariantOp(b, op))
			}
		}
	}
	if b.depth+1 > c.k.maxDepth {
		c.k.maxDepth = b.depth + 1
	}
	return code, nil
}

// op compiles one operation.
func (c *compiler) op(b *block, op *loom.Op, last bool) (instr, error) {
	if c.ops++; c.ops > loom.MaxCompiledOps {
		return nil, compileErr(op.Pos, ErrUnsupported, "the kernel compiles to more than %d operations (each inlined call's body and each loop body compiled again count every time%s): too large for the CPU executor", loom.MaxCompiledOps, loom.CallChain(c.calls))
	}
	if loom.LayoutOnly(op) {
		return nil, nil // only view types use it (loom.DenseLayout)
	}
	if op.Refused != "" {
		return nil, compileErr(op.Pos, ErrUnsupported, "%s", op.Refused)
	}
	if op.Opaque {
		return nil, compileErr(op.Pos, ErrUnsupported, "op %s is not supported by the CPU executor", op.Name)
	}
	name := op.Name
	switch name {
	case "scf.yield", "scf.condition", "func.return", "template.return":
		if b.term == nil {
			return nil, compileErr(op.Pos, ErrInvalid, "%s outside a region that takes it", name)
		}
		if !last {
			return nil, compileErr(op.Pos, ErrUnsupported, "%s before the end of its region", name)
		}
		vals, err := c.operands(b, op)
		if err != nil {
			return nil, err
		}
		return b.term(op, vals)
	}
	dialect, rest, _ := strings.Cut(name, ".")
	switch dialect {
	case "index":
		in, err := c.indexOp(b, op, rest)
		return c.windowed(b, op, in), err
	case "scalar":
		in, err := c.arith(b, op, rest)
		return c.windowed(b, op, in), err
	case "scf":
		return c.scfOp(b, op, rest)
	case "kernel":
		return c.kernelOp(b, op, rest)
	case "config":
		if rest == "get" {
			return nil, c.configGet(b, op)
		}
	case "target":
		if rest == "subgroup.size" {
			s, err := c.constInt(op.Pos, typeIndex, int64(c.k.tgt.subgroup))
			if err != nil {
				return nil, err
			}
			return nil, c.bind(b, op, 0, s)
		}
	case "buffer", "view":
		return c.memoryOp(b, op, name)
	case "vector":
		return c.vectorOp(b, op, rest)
	case "func", "template":
		return c.callOp(b, op, rest)
	}
	return nil, compileErr(op.Pos, ErrUnsupported, "op %s is not supported by the CPU executor", name)
}

func (c *compiler) configGet(b *block, op *loom.Op) error {
	if len(op.Types) == 0 {
		return compileErr(op.Pos, ErrInvalid, "config.get without a type")
	}
	t := op.Types[0]
	v, ok := c.config[op.Symbol]
	if !ok {
		d, ok2 := c.defs[op.Symbol]
		if !ok2 {
			return compileErr(op.Pos, ErrInvalid, "no value for config @%s (neither Options.Config nor a config.def)", op.Symbol)
		}
		var err error
		v, err = loom.ParseConst(t, d.Value.Text)
		if err != nil {
			return compileErr(d.Op.Pos, ErrInvalid, "config.def @%s: %v", op.Symbol, err)
		}
	}
	s, err := c.newSlot(op.Pos, t, true)
	if err != nil {
		return err
	}
	switch s.kind {
	case kInt:
		iv := v.Int
		if t.Kind == loom.TypeInt {
			iv = wrapBits(iv, t.Bits)
		}
		s.cst, s.ci = true, iv
	case kFloat:
		f, _ := floatFormat(op.Pos, t)
		fv := v.Float
		if v.Type != nil && v.Type.Kind != loom.TypeFloat {
			fv = float64(v.Int)
		}
		c.k.inits = append(c.k.inits, constInit{s: s, f: f.round(fv)})
	default:
		return compileErr(op.Pos, ErrUnsupported, "config value of type %s", t)
	}
	return c.bind(b, op, 0, s)
}

// posErr is a helper for malformed ops.
func arity(op *loom.Op, n int) error {
	if len(op.Operands) != n {
		return compileErr(op.Pos, ErrInvalid, "%s takes %d operands, has %d", op.Name, n, len(op.Operands))
	}
	return nil
}

func opType(op *loom.Op) (*loom.Type, error) {
	if len(op.Types) == 0 || op.Types[0] == nil {
		return nil, compileErr(op.Pos, ErrInvalid, "%s without a type", op.Name)
	}
	return op.Types[0], nil
}

// elemOf returns the scalar element type of t (t itself for scalars).
func elemOf(t *loom.Type) *loom.Type {
	if t != nil && t.IsShaped() && t.Elem != nil {
		return t.Elem
	}
	return t
}
