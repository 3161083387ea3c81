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
	// DynamicWorkgroupStorage is the byte count of the
	// dynamic_workgroup_storage clause, nil without one.
	DynamicWorkgroupStorage *Expr
	// Pos is the position of the kernel.launch.config terminator.
	Pos Pos
}

// LaunchClauses are the operands of kernel.launch.config by clause;
// Cluster is nil without cluster_size, Storage nil without
// dynamic_workgroup_storage.
type LaunchClauses struct {
	Workgroups, WorkgroupSize, Cluster []*Operand
	Storage                            *Operand
}

// launchClauseArity is the operand count of each clause of
// kernel.launch.config.
var launchClauseArity = map[string]int{"workgroups": 3, "workgroup_size": 3, "cluster_size": 3, "dynamic_workgroup_storage": 1}

// SplitLaunchConfig assigns the operands of a kernel.launch.config to its
// clauses in the order they are written. workgroups and workgroup_size are
// required, each clause appears at most once, and each has its arity.
func SplitLaunchConfig(op *Op) (LaunchClauses, error) {
	var c LaunchClauses
	var keys []*Attr
	for _, a := range op.Attrs {
		if _, ok := launchClauseArity[a.Key]; ok {
			keys = append(keys, a)
		}
	}
	fail := func(pos Pos, format string, args ...any) (LaunchClauses, error) {
		return LaunchClauses{}, &Error{Pos: pos, Class: ErrInvalid, Msg: fmt.Sprintf(format, args...)}
	}
	next := 0
	seen := map[string]bool{}
	for i, a := range keys {
		if seen[a.Key] {
			return fail(a.Pos, "kernel.launch.config has two %s clauses", a.Key)
		}
		seen[a.Key] = true
		// A clause's values are the operands written after its keyword
		// and before the next clause's.
		end := next
		for end < len(op.Operands) && (i+1 == len(keys) || op.Operands[end].Pos.Offset < keys[i+1].Pos.Offset) {
			end++
		}
		vals := op.Operands[next:end:end]
		next = end
		if n := launchClauseArity[a.Key]; len(vals) != n {
			return fail(a.Pos, "%s takes %d values, found %d", a.Key, n, len(vals))
		}
		switch a.Key {
		case "workgroups":
			c.Workgroups = vals
		case "workgroup_size":
			c.WorkgroupSize = vals
		case "cluster_size":
			c.Cluster = vals
		default:
			c.Storage = vals[0]
		}
	}
	if c.Workgroups == nil || c.WorkgroupSize == nil || next != len(op.Operands) {
		return fail(op.Pos, "kernel.launch.config takes workgroups(x, y, z) workgroup_size(x, y, z) [cluster_size(x, y, z)] [dynamic_workgroup_storage(bytes)]")
	}
	return c, nil
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
	cl, err := SplitLaunchConfig(term)
	if err != nil {
		return nil, notEvaluable(term.Pos, "%s", err.(*Error).Msg)
	}
	l := &LaunchExprs{Pos: term.Pos}
	for i := range 3 {
		if l.Workgroups[i], err = s.operand(cl.Workgroups[i]); err != nil {
			return nil, err
		}
		if l.WorkgroupSize[i], err = s.operand(cl.WorkgroupSize[i]); err != nil {
			return nil, err
		}
		if cl.Cluster == nil {
			l.ClusterSize[i] = &Expr{Op: ExprConst, Type: typeIndex, Const: Const{Type: typeIndex, Int: 1}, Pos: term.Pos}
		} else if l.ClusterSize[i], err = s.operand(cl.Cluster[i]); err != nil {
			return nil, err
		}
	}
	if cl.Storage != nil {
		if l.DynamicWorkgroupStorage, err = s.operand(cl.Storage); err != nil {
			return nil, err
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
	if l.DynamicWorkgroupStorage != nil {
		all.Args = append(all.Args, l.DynamicWorkgroupStorage)
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

// EvalStorage computes the dynamic_workgroup_storage byte count for env:
// 0 without the clause, an error when it is negative.
func (l *LaunchExprs) EvalStorage(env *Env) (int64, error) {
	e := l.DynamicWorkgroupStorage
	if e == nil {
		return 0, nil
	}
	c, err := e.Eval(env)
	if err != nil {
		return 0, err
	}
	if c.Int < 0 {
		return 0, evalErr(l.Pos, "dynamic_workgroup_storage = %d bytes; must not be negative", c.Int)
	}
	return c.Int, nil
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

// WorkloadGeometry evaluates the launch config of the kernel exported as
// export from m for integer workload arguments, in order, on target, with
// the config.def values: the geometry a benchmark or test launches with.
func WorkloadGeometry(m *Module, export string, target Target, workload ...int64) (Geometry, error) {
	p, err := NewProgram(m)
	if err != nil {
		return Geometry{}, err
	}
	k, err := p.Kernel(export)
	if err != nil {
		return Geometry{}, err
	}
	if len(k.Workload) != len(workload) {
		return Geometry{}, fmt.Errorf("%s takes %d workload arguments, %d given", export, len(k.Workload), len(workload))
	}
	env := &Env{Target: target}
	for i, w := range k.Workload {
		env.Workload = append(env.Workload, Const{Type: w.Type, Int: workload[i]})
	}
	return p.LaunchConfig(k, env)
}

// LaunchStorage evaluates the dynamic_workgroup_storage byte count of k
// for env (0 when the launch config has no such clause), with config.def
// values filling missing config keys.
func (p *Program) LaunchStorage(k *Kernel, env *Env) (int64, error) {
	l, err := p.LaunchExprs(k)
	if err != nil {
		return 0, err
	}
	return l.EvalStorage(p.withDefaults(env))
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
