package loom

import (
	"fmt"
	"math"
	"strings"
)

// analyzer runs access inference over kernel bodies and the function bodies
// they call. Function summaries are memoized in Program.summaries; stack
// holds the functions being summarized, for recursion.
type analyzer struct {
	p     *Program
	stack []*Func
}

// funcSummary is a function's effect on each of its parameters (as roots).
type funcSummary struct {
	res        *bodyResult
	inProgress bool
	depth      int
}

// bodyResult is what the analysis of one body found, per root.
type bodyResult struct {
	n        int
	aliases  map[*Value]rootSet
	access   []Access
	evidence [][]Evidence
	elems    []map[string]*Type
	opaque   []bool
	reasons  []string  // first conservative reason per root
	rets     []rootSet // func.return operand k may alias these roots
	low      int       // lowest stack depth of an unfinished function used
	views    []*Op     // buffer.view ops whose base is rooted
	calls    []callSite
}

// callSite is a call through which roots reach a visible function body.
type callSite struct {
	op     *Op
	callee *Func
}

func newBodyResult(n int) *bodyResult {
	return &bodyResult{
		n:        n,
		aliases:  map[*Value]rootSet{},
		access:   make([]Access, n),
		evidence: make([][]Evidence, n),
		elems:    make([]map[string]*Type, n),
		opaque:   make([]bool, n),
		reasons:  make([]string, n),
		low:      math.MaxInt,
	}
}

// elem returns the single element type of root i's views, or nil.
func (r *bodyResult) elem(i int) *Type {
	if i >= r.n || r.opaque[i] || len(r.elems[i]) != 1 {
		return nil
	}
	for _, t := range r.elems[i] {
		return t
	}
	return nil
}

func (r *bodyResult) sameAs(o *bodyResult) bool {
	if r.n != o.n || len(r.rets) != len(o.rets) {
		return false
	}
	for i := 0; i < r.n; i++ {
		if r.access[i] != o.access[i] || r.opaque[i] != o.opaque[i] || len(r.elems[i]) != len(o.elems[i]) {
			return false
		}
	}
	for i := range r.rets {
		if !r.rets[i].equal(o.rets[i]) {
			return false
		}
	}
	return true
}

// analyzeBody analyses one body whose roots are the given parameter values
// (params[i] are the values standing for root i).
func (a *analyzer) analyzeBody(body *Region, params [][]*Value) *bodyResult {
	w := &bodyWalk{a: a, res: newBodyResult(len(params)), summaries: map[*Func]*bodyResult{}}
	for i, vs := range params {
		for _, v := range vs {
			s, _ := w.res.aliases[v].with(i)
			w.res.aliases[v] = s
		}
	}
	// Phase 1: alias sets to a fixpoint (loop back edges, while loops).
	for iter := 0; iter < 1000; iter++ {
		w.changed = false
		w.walk(body, false)
		if !w.changed {
			break
		}
	}
	// Phase 2: effects, once, over the final alias sets.
	w.walk(body, true)
	r := w.res
	for v, rs := range r.aliases {
		if v.Type == nil || v.Type.Kind != TypeView || v.Type.Elem == nil {
			continue
		}
		t := v.Type.Elem
		rs.each(func(i int) { r.addElem(i, t) })
	}
	for _, op := range body.Ops {
		if op.Name != "func.return" && op.Name != "template.return" {
			continue
		}
		for k, o := range op.Operands {
			for len(r.rets) <= k {
				r.rets = append(r.rets, nil)
			}
			r.rets[k], _ = r.rets[k].union(w.rootsOf(o))
		}
	}
	return r
}

func (r *bodyResult) addElem(i int, t *Type) {
	if i >= r.n || t == nil {
		return
	}
	if r.elems[i] == nil {
		r.elems[i] = map[string]*Type{}
	}
	k := t.String()
	if _, ok := r.elems[i][k]; !ok {
		r.elems[i][k] = t
	}
}

// summary returns the summary of f's body and the lowest stack depth of an
// unfinished function it depended on (math.MaxInt when none).
func (a *analyzer) summary(f *Func) (*bodyResult, int) {
	if s, ok := a.p.summaries[f]; ok {
		if s.inProgress {
			return s.res, s.depth
		}
		return s.res, math.MaxInt
	}
	params := bodyArgs(f.Body.Args, f.Params)
	depth := len(a.stack)
	s := &funcSummary{res: newBodyResult(len(params)), inProgress: true, depth: depth}
	a.p.summaries[f] = s
	a.stack = append(a.stack, f)
	low := math.MaxInt
	for iter := 0; ; iter++ {
		r := a.analyzeBody(f.Body, params)
		stable := r.sameAs(s.res)
		s.res = r
		low = min(low, r.low)
		if r.low > depth || stable {
			break
		}
		if iter >= 64 {
			for i := range r.access {
				r.access[i] = AccessReadWrite
				r.opaque[i] = true
				r.reasons[i] = fmt.Sprintf("recursion through @%s did not converge", f.Symbol)
			}
			break
		}
	}
	a.stack = a.stack[:depth]
	s.inProgress = false
	if low < depth {
		// Depends on an ancestor's partial summary: recompute next time.
		delete(a.p.summaries, f)
		return s.res, low
	}
	return s.res, math.MaxInt
}

// bodyWalk is the state of one body's analysis.
type bodyWalk struct {
	a         *analyzer
	res       *bodyResult
	changed   bool
	summaries map[*Func]*bodyResult
}

func (w *bodyWalk) summary(f *Func) *bodyResult {
	if r, ok := w.summaries[f]; ok {
		return r
	}
	r, low := w.a.summary(f)
	w.res.low = min(w.res.low, low)
	w.summaries[f] = r
	return r
}

func (w *bodyWalk) rootsOf(o *Operand) rootSet {
	if o == nil || o.Value == nil {
		return nil
	}
	return w.res.aliases[o.Value]
}

func (w *bodyWalk) flow(dst *Value, s rootSet) {
	if dst == nil || s.empty() {
		return
	}
	cur := w.res.aliases[dst]
	cur, ch := cur.union(s)
	if ch {
		w.res.aliases[dst] = cur
		w.changed = true
	}
}

func (w *bodyWalk) walk(r *Region, effects bool) {
	if r == nil {
		return
	}
	for _, op := range r.Ops {
		if op == nil {
			continue
		}
		if effects {
			w.effect(op)
		} else {
			w.alias(op)
		}
		for _, sub := range op.Regions {
			w.walk(sub, effects)
		}
	}
}

func lastOp(r *Region, name string) *Op {
	if r == nil {
		return nil
	}
	for i := len(r.Ops) - 1; i >= 0; i-- {
		if r.Ops[i] != nil && r.Ops[i].Name == name {
			return r.Ops[i]
		}
	}
	return nil
}

func operandAt(op *Op, i int) *Operand {
	if op == nil || i < 0 || i >= len(op.Operands) {
		return nil
	}
	return op.Operands[i]
}

func resultAt(op *Op, i int) *Value {
	if i < 0 || i >= len(op.Results) {
		return nil
	}
	return op.Results[i]
}

func argAt(r *Region, i int) *Value {
	if r == nil || i < 0 || i >= len(r.Args) {
		return nil
	}
	return r.Args[i]
}

// alias propagates root membership from an op's operands to its results
// and region arguments.
func (w *bodyWalk) alias(op *Op) {
	switch op.Name {
	case "buffer.view", "view.subview", "view.refine", "buffer.assume.alignment",
		"buffer.assume.memory_space", "buffer.assume.noalias", "kernel.subgroup.broadcast",
		"kernel.subgroup.broadcast.first", "kernel.subgroup.shuffle":
		for k, r := range op.Results {
			if k < len(op.Operands) && (k == 0 || strings.HasPrefix(op.Name, "buffer.assume")) {
				w.flow(r, w.rootsOf(op.Operands[k]))
			}
		}
	case "buffer.assume.same_root":
		s := w.rootsOf(operandAt(op, 0)).clone()
		s, _ = s.union(w.rootsOf(operandAt(op, 1)))
		w.flow(resultAt(op, 0), s)
	case "scf.select":
		w.flow(resultAt(op, 0), w.rootsOf(operandAt(op, 1)))
		w.flow(resultAt(op, 0), w.rootsOf(operandAt(op, 2)))
	case "scf.if", "scf.switch":
		for _, reg := range op.Regions {
			if y := lastOp(reg, "scf.yield"); y != nil {
				for k, r := range op.Results {
					w.flow(r, w.rootsOf(operandAt(y, k)))
				}
			}
		}
	case "scf.for":
		if len(op.Regions) == 0 {
			return
		}
		body := op.Regions[0]
		y := lastOp(body, "scf.yield")
		for k := 0; k+3 < len(op.Operands) || k < len(op.Results); k++ {
			init := w.rootsOf(operandAt(op, 3+k))
			next := w.rootsOf(operandAt(y, k))
			w.flow(argAt(body, k+1), init)
			w.flow(argAt(body, k+1), next)
			w.flow(resultAt(op, k), init)
			w.flow(resultAt(op, k), next)
		}
	case "scf.while":
		var before, after *Region
		if len(op.Regions) > 0 {
			before = op.Regions[0]
		}
		if len(op.Regions) > 1 {
			after = op.Regions[1]
		}
		cond := lastOp(before, "scf.condition")
		y := lastOp(after, "scf.yield")
		n := max(len(op.Operands), len(op.Results))
		for k := 0; k < n; k++ {
			w.flow(argAt(before, k), w.rootsOf(operandAt(op, k)))
			w.flow(argAt(before, k), w.rootsOf(operandAt(y, k)))
			fwd := w.rootsOf(operandAt(cond, k+1))
			w.flow(argAt(after, k), fwd)
			w.flow(resultAt(op, k), fwd)
		}
	case "scf.lookup":
		for _, c := range op.Cases {
			if c == nil {
				continue
			}
			for k, v := range c.Values {
				w.flow(resultAt(op, k), w.rootsOf(v))
			}
		}
	case "func.call", "template.call", "func.apply", "template.apply":
		callees, _ := w.callees(op)
		if callees == nil {
			w.flowAllToResults(op)
			return
		}
		for _, f := range callees {
			if f.Body == nil {
				w.flowAllToResults(op)
				continue
			}
			s := w.summary(f)
			for k, r := range op.Results {
				if k < len(s.rets) {
					s.rets[k].each(func(j int) { w.flow(r, w.rootsOf(operandAt(op, j))) })
				}
			}
		}
	default:
		if !knownOp(op.Name) {
			w.flowAllToResults(op)
		}
	}
}

// flowAllToResults makes every result of an opaque op alias every root its
// operands carry.
func (w *bodyWalk) flowAllToResults(op *Op) {
	var all rootSet
	for _, o := range op.Operands {
		all, _ = all.union(w.rootsOf(o))
	}
	for _, r := range op.Results {
		w.flow(r, all)
	}
}

// callees resolves the functions a call or apply may reach: nil with a
// reason when nothing can be resolved (the op is then opaque).
func (w *bodyWalk) callees(op *Op) ([]*Func, string) {
	p := w.a.p
	switch op.Name {
	case "func.call", "template.call":
		f := p.Func(op.Symbol)
		if f == nil {
			return nil, fmt.Sprintf("@%s is not defined in the analysed files", op.Symbol)
		}
		return []*Func{f}, ""
	default:
		fam := strings.TrimPrefix(strings.TrimSpace(op.Param), "@")
		if fam == "" {
			fam = op.Symbol
		}
		prov := p.Providers(fam)
		if len(prov) == 0 {
			return nil, fmt.Sprintf("no provider of template family %s is visible in the analysed files", fam)
		}
		return prov, ""
	}
}

var effectOps = map[string]Access{
	"view.load": AccessRead, "view.atomic.load": AccessRead, "vector.load": AccessRead,
	"vector.load.mask": AccessRead, "vector.load.expand": AccessRead, "vector.gather": AccessRead,
	"vector.gather.mask": AccessRead, "vector.fragment.load": AccessRead,
	"view.store": AccessWrite, "view.atomic.store": AccessWrite, "vector.store": AccessWrite,
	"vector.store.mask": AccessWrite, "vector.store.compress": AccessWrite, "vector.scatter": AccessWrite,
	"vector.scatter.mask": AccessWrite, "vector.fragment.store": AccessWrite,
	"view.atomic.rmw": AccessReadWrite, "view.atomic.reduce": AccessReadWrite,
	"view.atomic.cmpxchg": AccessReadWrite, "vector.atomic.reduce": AccessReadWrite,
	"vector.atomic.reduce.mask": AccessReadWrite, "vector.atomic.rmw": AccessReadWrite,
	"vector.atomic.rmw.mask": AccessReadWrite, "vector.atomic.cmpxchg": AccessReadWrite,
}

var asyncCopyOps = map[string]bool{
	"kernel.async.copy": true, "kernel.async.copy.mask": true, "kernel.async.gather": true,
	"kernel.async.gather.mask": true, "kernel.async.cluster.gather": true,
	"kernel.async.cluster.gather.mask": true, "kernel.async.tensor.load.to.lds": true,
	"kernel.async.tensor.store.from.lds": true,
}

// noEffectOps take storage values without touching their payload.
var noEffectOps = map[string]bool{
	"buffer.view": true, "view.subview": true, "view.refine": true, "buffer.assume.noalias": true,
	"buffer.assume.alignment": true, "buffer.assume.memory_space": true, "buffer.assume.same_root": true,
	"buffer.length": true, "view.prefetch": true, "scf.select": true, "scf.yield": true,
	"scf.condition": true, "scf.if": true, "scf.for": true, "scf.while": true, "scf.switch": true,
	"scf.lookup": true, "func.return": true, "template.return": true, "kernel.subgroup.broadcast": true,
	"kernel.subgroup.broadcast.first": true, "kernel.subgroup.shuffle": true,
	"kernel.async.group": true, "kernel.async.wait": true,
}

// knownOp reports whether the analysis models the op (as an effect, an
// alias, a call, or a pure op that never takes storage values).
func knownOp(name string) bool {
	if _, ok := effectOps[name]; ok {
		return true
	}
	if asyncCopyOps[name] || noEffectOps[name] {
		return true
	}
	switch name {
	case "func.call", "template.call", "func.apply", "template.apply", "low.invoke":
		return name != "low.invoke"
	}
	for _, pre := range []string{"index.", "scalar.", "config.", "target.", "kernel.workitem.",
		"kernel.workgroup.", "kernel.subgroup.", "kernel.cluster.", "kernel.barrier", "kernel.return",
		"kernel.exit", "kernel.assert", "buffer.alloca", "buffer.pack"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	if strings.HasPrefix(name, "vector.") {
		// Lane-wise and rearranging vector ops hold no storage; the memory
		// ones are in effectOps, anything else touching a view is unknown.
		return !strings.Contains(name, "load") && !strings.Contains(name, "store") &&
			!strings.Contains(name, "atomic") && !strings.Contains(name, "gather") &&
			!strings.Contains(name, "scatter")
	}
	return false
}

func (w *bodyWalk) record(roots rootSet, ev Evidence) {
	roots.each(func(i int) {
		if i >= w.res.n {
			return
		}
		w.res.access[i] |= ev.Effect
		w.res.evidence[i] = append(w.res.evidence[i], ev)
		if ev.Basis == BasisConservative {
			if !w.res.opaque[i] {
				w.res.reasons[i] = ev.Reason
			}
			w.res.opaque[i] = true
		}
	})
}

func (w *bodyWalk) conservative(op *Op, reason string) {
	for _, o := range op.Operands {
		if s := w.rootsOf(o); !s.empty() {
			w.record(s, Evidence{Pos: op.Pos, Op: op.Name, Effect: AccessReadWrite, Basis: BasisConservative, Reason: reason})
		}
	}
}

// effect records what op does to the storage of rooted operands.
func (w *bodyWalk) effect(op *Op) {
	if eff, ok := effectOps[op.Name]; ok {
		// Only the view operand of a memory op can carry roots (the others
		// are stored values, indices and masks), so every rooted operand is
		// the touched one whatever the exact operand layout.
		for _, o := range op.Operands {
			if s := w.rootsOf(o); !s.empty() {
				w.record(s, Evidence{Pos: op.Pos, Op: op.Name, Effect: eff, Basis: BasisExact})
			}
		}
		return
	}
	if asyncCopyOps[op.Name] {
		w.asyncCopy(op)
		return
	}
	if op.Name == "buffer.view" && !w.rootsOf(operandAt(op, 0)).empty() {
		w.res.views = append(w.res.views, op)
	}
	if noEffectOps[op.Name] {
		return
	}
	switch op.Name {
	case "func.call", "template.call", "func.apply", "template.apply":
		w.callEffect(op)
		return
	case "low.invoke":
		w.conservative(op, "low.invoke runs target code the analysis cannot see")
		return
	}
	if !knownOp(op.Name) {
		w.conservative(op, fmt.Sprintf("%s is not an op the access analysis models", op.Name))
	}
}

// asyncCopy applies source R, destination W: the first storage operand is
// the source and the last the destination.
func (w *bodyWalk) asyncCopy(op *Op) {
	var storage []*Operand
	for _, o := range op.Operands {
		if o.Value != nil && o.Value.Type != nil && (o.Value.Type.Kind == TypeView || o.Value.Type.Kind == TypeBuffer) || !w.rootsOf(o).empty() {
			storage = append(storage, o)
		}
	}
	if len(storage) < 2 {
		w.conservative(op, fmt.Sprintf("%s: cannot tell its source from its destination", op.Name))
		return
	}
	if s := w.rootsOf(storage[0]); !s.empty() {
		w.record(s, Evidence{Pos: op.Pos, Op: op.Name, Effect: AccessRead, Basis: BasisExact, Reason: "async copy source"})
	}
	if s := w.rootsOf(storage[len(storage)-1]); !s.empty() {
		w.record(s, Evidence{Pos: op.Pos, Op: op.Name, Effect: AccessWrite, Basis: BasisExact, Reason: "async copy destination"})
	}
}

func (w *bodyWalk) callEffect(op *Op) {
	anyRooted := false
	for _, o := range op.Operands {
		if !w.rootsOf(o).empty() {
			anyRooted = true
		}
	}
	if !anyRooted {
		return
	}
	callees, why := w.callees(op)
	if callees == nil {
		w.conservative(op, why)
		return
	}
	label := op.Name
	if op.Symbol != "" {
		label += " @" + op.Symbol
	} else if op.Param != "" {
		label += "<" + op.Param + ">"
	}
	for _, f := range callees {
		if f.Body == nil {
			w.conservative(op, fmt.Sprintf("@%s has no body in the analysed files", f.Symbol))
			continue
		}
		s := w.summary(f)
		w.res.calls = append(w.res.calls, callSite{op: op, callee: f})
		for j, o := range op.Operands {
			roots := w.rootsOf(o)
			if roots.empty() || j >= s.n {
				continue
			}
			for _, t := range s.elems[j] {
				roots.each(func(i int) { w.res.addElem(i, t) })
			}
			if s.access[j] == AccessNone && !s.opaque[j] {
				continue
			}
			basis := BasisCall
			reason := describeCallee(f, j, s)
			if s.opaque[j] {
				basis = BasisConservative
				reason += "; " + s.reasons[j]
			}
			w.record(roots, Evidence{Pos: op.Pos, Op: label, Effect: s.access[j], Basis: basis, Reason: reason})
		}
	}
}

// describeCallee summarizes what callee f does to its parameter j.
func describeCallee(f *Func, j int, s *bodyResult) string {
	name := fmt.Sprintf("#%d", j)
	if j < len(f.Params) && f.Params[j] != nil {
		name = "%" + f.Params[j].Name
	} else if f.Body != nil && j < len(f.Body.Args) && f.Body.Args[j] != nil {
		name = "%" + f.Body.Args[j].Name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@%s %s %s", f.Symbol, name, s.access[j])
	ev := s.evidence[j]
	for i, e := range ev {
		if i == 3 {
			fmt.Fprintf(&b, ", … (%d more)", len(ev)-3)
			break
		}
		if i == 0 {
			b.WriteString(" by ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s at %s", e.Op, e.Pos)
	}
	return b.String()
}
