package loom

import "fmt"

// Extent is how many bytes, from the start of a storage parameter, the
// kernel's views over it may span: an offset-typed expression over launch
// arguments, config values and (through kernel.workgroup.count/size) the
// workload arguments of the launch geometry, or nil with a Reason when it
// cannot be known.
type Extent struct {
	Param  *Value
	Index  int   // position in Kernel.Launch
	Bytes  *Expr // nil when unknown
	Reason string
}

// Extents computes, for every buffer or view launch parameter of k in
// launch order, the maximum over all buffer.view ops reaching it (in the
// body and in called helpers) of byte offset + Π dims · sizeof(elem), with
// dims resolved through the def chain to launch arguments, config values
// and constants. Subviews stay within their parent and add nothing. Element
// sizes of index and offset use TargetGPU's carriers. The result is
// memoized and shared: do not modify it.
func (p *Program) Extents(k *Kernel) []Extent {
	if k == nil {
		return nil
	}
	acc := p.Access(k)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.extents[k]; ok {
		return e
	}
	r := p.bodies[k]
	out := make([]Extent, 0, len(acc))
	for _, pa := range acc {
		out = append(out, p.extent(k, r, pa))
	}
	p.extents[k] = out
	return out
}

func (p *Program) extent(k *Kernel, r *bodyResult, pa ParamAccess) Extent {
	ex := Extent{Param: pa.Param, Index: pa.Index}
	if r == nil {
		ex.Reason = "kernel has no body"
		return ex
	}
	if r.opaque[pa.Index] {
		ex.Reason = "reaches an opaque use: " + r.reasons[pa.Index]
		return ex
	}
	l, _ := p.launchExprsLocked(k)
	s := p.bodyEval(k, l)
	c := &extentCollector{p: p, root: pa.Index}
	if t := pa.Param.Type; t.Kind == TypeView {
		e, err := viewBytes(s, nil, t, pa.Param.Pos)
		if err != nil {
			ex.Reason = err.Error()
			return ex
		}
		c.cands = append(c.cands, e)
	}
	rootOf := func(o *Operand) rootSet {
		if o == nil || o.Value == nil {
			return nil
		}
		return r.aliases[o.Value]
	}
	if err := c.collect(s, r, func(o *Operand) bool { return rootOf(o).has(pa.Index) }, 0); err != nil {
		ex.Reason = err.Error()
		return ex
	}
	if len(c.cands) == 0 {
		ex.Bytes = &Expr{Op: ExprConst, Type: typeOffset, Const: Const{Type: typeOffset}, Pos: pa.Param.Pos}
		return ex
	}
	e := c.cands[0]
	for _, x := range c.cands[1:] {
		if x.String() == e.String() {
			continue
		}
		e = foldExpr(&Expr{Op: ExprMax, Type: typeOffset, Args: []*Expr{e, x}, Pos: x.Pos})
	}
	ex.Bytes = e
	return ex
}

// bodyEval is an evaluator of k's body values over its launch arguments;
// geom (may be nil) gives the geometry queries their launch-config values.
func (p *Program) bodyEval(k *Kernel, geom *LaunchExprs) *symEval {
	s := newSymEval(p, "kernel body")
	for i, v := range k.Launch {
		s.bind[v] = &Expr{Op: ExprLaunch, Type: v.Type, Arg: i, Pos: v.Pos}
	}
	for i, v := range k.Body.Args {
		if i < len(k.Launch) {
			s.bind[v] = s.bind[k.Launch[i]]
		}
	}
	s.geom = geom
	return s
}

type extentCollector struct {
	p     *Program
	root  int
	cands []*Expr
	stack []*Func // helpers being walked, for recursion
}

const maxExtentDepth = 8

// collect adds the extent of every view in a body (r, evaluated with s)
// whose base satisfies reaches, following calls into helpers.
func (c *extentCollector) collect(s *symEval, r *bodyResult, reaches func(*Operand) bool, depth int) error {
	for _, op := range r.views {
		if !reaches(operandAt(op, 0)) {
			continue
		}
		e, err := bufferViewBytes(s, op)
		if err != nil {
			return err
		}
		c.cands = append(c.cands, e)
	}
	for _, cs := range r.calls {
		var args []int
		for j, o := range cs.op.Operands {
			if reaches(o) {
				args = append(args, j)
			}
		}
		if len(args) == 0 {
			continue
		}
		for _, f := range c.stack {
			if f == cs.callee {
				return fmt.Errorf("%s: views through the recursive call to @%s are not bounded", cs.op.Pos, f.Symbol)
			}
		}
		if depth >= maxExtentDepth {
			return fmt.Errorf("%s: helper calls nest deeper than %d", cs.op.Pos, maxExtentDepth)
		}
		sub, _ := (&analyzer{p: c.p}).summary(cs.callee)
		inner := newSymEval(c.p, "helper body")
		inner.geom = s.geom
		params := bodyArgs(cs.callee.Body.Args, cs.callee.Params)
		for j, vs := range params {
			if j >= len(cs.op.Operands) {
				break
			}
			e, err := s.operand(cs.op.Operands[j])
			for _, v := range vs {
				if err != nil {
					inner.memo[v] = symResult{err: err}
				} else {
					inner.bind[v] = e
				}
			}
		}
		set := rootSet(nil)
		for _, j := range args {
			set, _ = set.with(j)
		}
		c.stack = append(c.stack, cs.callee)
		err := c.collect(inner, sub, func(o *Operand) bool {
			if o == nil || o.Value == nil {
				return false
			}
			hit := false
			sub.aliases[o.Value].each(func(j int) { hit = hit || set.has(j) })
			return hit
		}, depth+1)
		c.stack = c.stack[:len(c.stack)-1]
		if err != nil {
			if depth > 0 {
				return err
			}
			return fmt.Errorf("through call to @%s at %s: %w", cs.callee.Symbol, cs.op.Pos, err)
		}
	}
	return nil
}

// bufferViewBytes is the byte span of a buffer.view op from the start of
// its buffer.
func bufferViewBytes(s *symEval, op *Op) (*Expr, error) {
	var vt *Type
	if len(op.ResultTypes) > 0 {
		vt = op.ResultTypes[0]
	} else if len(op.Results) > 0 {
		vt = op.Results[0].Type
	}
	if vt == nil || vt.Kind != TypeView {
		return nil, fmt.Errorf("%s: buffer.view without a view result type", op.Pos)
	}
	return viewBytes(s, operandAt(op, 1), vt, op.Pos)
}

// viewBytes is off + Π dims · sizeof(elem) for a view type, as an offset
// expression.
func viewBytes(s *symEval, off *Operand, vt *Type, pos Pos) (*Expr, error) {
	if !DenseLayout(vt) {
		// A dense layout value (encoding.layout.dense, a dense
		// #physical_storage, …) addresses as #dense does on both backends.
		return nil, fmt.Errorf("%s: view with layout %s: strided extents are not computed", pos, vt.Layout)
	}
	if vt.Elem == nil {
		return nil, fmt.Errorf("%s: view type %s has no element type", pos, vt)
	}
	size := TargetGPU.ByteSizeOn(vt.Elem)
	if size == 0 {
		return nil, fmt.Errorf("%s: element type %s has no known size", pos, vt.Elem)
	}
	toOffset := func(e *Expr) *Expr {
		if e.Type != nil && e.Type.Kind == TypeOffset {
			return e
		}
		return foldExpr(&Expr{Op: ExprCast, Pred: "index", Type: typeOffset, Args: []*Expr{e}, Pos: e.Pos})
	}
	bytes := &Expr{Op: ExprConst, Type: typeOffset, Const: Const{Type: typeOffset, Int: int64(size)}, Pos: pos}
	for _, d := range vt.Dims {
		var de *Expr
		if d.Value != nil {
			e, err := s.operand(d.Value)
			if err != nil {
				return nil, fmt.Errorf("dimension %%%s of the view at %s is not expressible from launch arguments: %w", d.Value.Name, pos, err)
			}
			de = toOffset(e)
		} else {
			if d.Size < 0 {
				return nil, fmt.Errorf("%s: negative dimension %d", pos, d.Size)
			}
			de = &Expr{Op: ExprConst, Type: typeOffset, Const: Const{Type: typeOffset, Int: d.Size}, Pos: pos}
		}
		bytes = foldExpr(&Expr{Op: ExprMul, Type: typeOffset, Args: []*Expr{de, bytes}, Pos: pos})
	}
	if off != nil {
		oe, err := s.operand(off)
		if err != nil {
			return nil, fmt.Errorf("byte offset of the view at %s is not expressible from launch arguments: %w", pos, err)
		}
		bytes = foldExpr(&Expr{Op: ExprAdd, Type: typeOffset, Args: []*Expr{toOffset(oe), bytes}, Pos: pos})
	}
	return bytes, nil
}
