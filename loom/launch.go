package loom

import "fmt"

// Geometry is a concrete launch: workgroups per axis, invocations per
// workgroup per axis, and cluster size ({1,1,1} when the kernel has none).
type Geometry struct {
	Workgroups, WorkgroupSize, ClusterSize [3]int64
}

// LaunchExprs is the kernel's launch-config region translated into
// expressions over workload arguments, config values and the target
// subgroup size. ClusterSize holds index constants 1 when the region states
// no cluster_size.
type LaunchExprs struct {
	Workgroups, WorkgroupSize, ClusterSize [3]*Expr
	// Pos is the position of the kernel.launch.config terminator.
	Pos Pos
}

// LaunchExprs translates the config region of k. Only what feeds
// kernel.launch.config is translated; an op on that path that is not host
// arithmetic is an error (class ErrNotEvaluable) naming the op and its
// position. The result is memoized and shared: do not modify it.
func (p *Program) LaunchExprs(k *Kernel) (*LaunchExprs, error) {
	p.mu.Lock()
	if m, ok := p.launch[k]; ok {
		p.mu.Unlock()
		return m.l, m.err
	}
	p.mu.Unlock()
	l, err := p.launchExprs(k)
	p.mu.Lock()
	p.launch[k] = launchMemo{l, err}
	p.mu.Unlock()
	return l, err
}

// launchExprsLocked is LaunchExprs for callers that hold p.mu.
func (p *Program) launchExprsLocked(k *Kernel) (*LaunchExprs, error) {
	if m, ok := p.launch[k]; ok {
		return m.l, m.err
	}
	l, err := p.launchExprs(k)
	p.launch[k] = launchMemo{l, err}
	return l, err
}

func (p *Program) launchExprs(k *Kernel) (*LaunchExprs, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: nil kernel", ErrNotEvaluable)
	}
	if k.Config == nil {
		return nil, notEvaluable(opPos(k.Op), "kernel @%s has no launch-config region (a kernel.decl cannot be launched from this module)", k.Symbol)
	}
	s := newSymEval(p, "launch-config region")
	for i, v := range k.Workload {
		s.bind[v] = &Expr{Op: ExprWorkload, Type: v.Type, Arg: i, Pos: v.Pos}
	}
	for i, v := range k.Config.Args {
		if i < len(k.Workload) {
			s.bind[v] = s.bind[k.Workload[i]]
		}
	}
	var term *Op
	for _, o := range k.Config.Ops {
		if o.Name == "kernel.launch.config" {
			term = o
		}
	}
	if term == nil {
		return nil, notEvaluable(k.Config.Pos, "launch-config region of @%s does not end in kernel.launch.config", k.Symbol)
	}
	if n := len(term.Operands); n != 6 && n != 9 {
		return nil, notEvaluable(term.Pos, "kernel.launch.config has %d operands; want 6 or 9", n)
	}
	l := &LaunchExprs{Pos: term.Pos}
	for i, o := range term.Operands {
		e, err := s.operand(o)
		if err != nil {
			return nil, err
		}
		switch {
		case i < 3:
			l.Workgroups[i] = e
		case i < 6:
			l.WorkgroupSize[i-3] = e
		default:
			l.ClusterSize[i-6] = e
		}
	}
	if len(term.Operands) == 6 {
		for i := range l.ClusterSize {
			l.ClusterSize[i] = &Expr{Op: ExprConst, Type: typeIndex, Const: Const{Type: typeIndex, Int: 1}, Pos: term.Pos}
		}
	}
	return l, nil
}

// StaticWorkgroupSize returns the workgroup size when it is a constant:
// it depends on no workload argument, config value or target property.
func (l *LaunchExprs) StaticWorkgroupSize() ([3]int64, bool) {
	var out [3]int64
	for i, e := range l.WorkgroupSize {
		if !e.IsConst() {
			return out, false
		}
		out[i] = e.Const.Int
	}
	return out, true
}

// StaticGeometry returns the whole geometry when every part is constant.
func (l *LaunchExprs) StaticGeometry() (Geometry, bool) {
	var g Geometry
	for i := 0; i < 3; i++ {
		for _, pair := range []struct {
			e   *Expr
			dst *int64
		}{{l.Workgroups[i], &g.Workgroups[i]}, {l.WorkgroupSize[i], &g.WorkgroupSize[i]}, {l.ClusterSize[i], &g.ClusterSize[i]}} {
			if !pair.e.IsConst() {
				return Geometry{}, false
			}
			*pair.dst = pair.e.Const.Int
		}
	}
	return g, true
}

// Deps lists the workload arguments, config values and target properties
// the geometry depends on.
func (l *LaunchExprs) Deps() ExprDeps {
	all := &Expr{Op: ExprAdd}
	for i := 0; i < 3; i++ {
		all.Args = append(all.Args, l.Workgroups[i], l.WorkgroupSize[i], l.ClusterSize[i])
	}
	return all.Deps()
}

// Eval computes the geometry for env and checks it: workgroup counts are
// non-negative, workgroup and cluster sizes positive.
func (l *LaunchExprs) Eval(env *Env) (Geometry, error) {
	var g Geometry
	for i := 0; i < 3; i++ {
		for _, part := range []struct {
			e    *Expr
			dst  *int64
			name string
			min  int64
		}{
			{l.Workgroups[i], &g.Workgroups[i], "workgroups", 0},
			{l.WorkgroupSize[i], &g.WorkgroupSize[i], "workgroup_size", 1},
			{l.ClusterSize[i], &g.ClusterSize[i], "cluster_size", 1},
		} {
			c, err := part.e.Eval(env)
			if err != nil {
				return Geometry{}, err
			}
			if c.Int < part.min {
				return Geometry{}, evalErr(l.Pos, "%s[%c] = %d; must be at least %d", part.name, "xyz"[i], c.Int, part.min)
			}
			*part.dst = c.Int
		}
	}
	return g, nil
}

// LaunchConfig evaluates the launch geometry of k for env. Config values
// missing from env.Config fall back to the program's config.def values.
func (p *Program) LaunchConfig(k *Kernel, env *Env) (Geometry, error) {
	l, err := p.LaunchExprs(k)
	if err != nil {
		return Geometry{}, err
	}
	return l.Eval(p.withDefaults(env))
}

// withDefaults returns env with config.def values filling missing keys.
func (p *Program) withDefaults(env *Env) *Env {
	if env == nil {
		env = &Env{}
	}
	if len(p.configDefs) == 0 {
		return env
	}
	defs, _ := p.ConfigDefaults()
	e := *env
	e.Config = make(map[string]Const, len(defs)+len(env.Config))
	for k, v := range defs {
		e.Config[k] = v
	}
	for k, v := range env.Config {
		e.Config[k] = v
	}
	return &e
}
