package checkrun

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
	"github.com/loomgen/loomgen/loom/ptx"
	loomrt "github.com/loomgen/loomgen/runtime"
)

// outcome ends a sub-case early with a status.
type outcome struct {
	st  Status
	msg string
}

func (o *outcome) Error() string { return o.msg }

func skipf(format string, args ...any) error {
	return &outcome{st: Skip, msg: fmt.Sprintf(format, args...)}
}

func failf(format string, args ...any) error {
	return &outcome{st: Fail, msg: fmt.Sprintf(format, args...)}
}

func errorf(format string, args ...any) error {
	return &outcome{st: Error, msg: fmt.Sprintf(format, args...)}
}

// eval is the evaluation of one sub-case.
type eval struct {
	r  *Runner
	in *Instance
	// env holds each SSA value: a loom.Const or a *tensor.
	env       map[string]any
	sess      *session
	sanitized bool
	events    []*interp.Event
	// regions holds the device copy of each root tensor a kernel used.
	regions map[*tensor]loomrt.Region
	// calls are the kernel dispatches made, for benchmarks; bytes the
	// bytes of the buffers they bind.
	calls    []loomrt.Dispatch
	bytes    int64
	failures []string
	// expects are the check.expect.event ops, matched at the end.
	expects []*loom.Op
}

func (r *Runner) newEval(in *Instance) *eval {
	return &eval{r: r, in: in, env: map[string]any{}, regions: map[*tensor]loomrt.Region{}}
}

// supportedOps are the ops a case body may hold.
var supportedOps = map[string]bool{
	"check.param.choice": true, "check.param.range": true, "check.param.seed": true,
	"check.literal": true, "check.generate.fill": true, "check.generate.iota": true,
	"check.generate.random.uniform": true, "check.tensor.view": true,
	"func.call": true, "check.oracle.call": true,
	"check.expect.equal": true, "check.expect.close": true, "check.expect.bitwise": true,
	"check.expect.shape": true, "check.expect.event": true,
	"check.requires": true, "check.skip_if": true, "check.return": true,
}

// run evaluates the sub-case: requirements first, then every op in order,
// then the event expectations.
func (e *eval) run() (Status, string) {
	err := e.prepare()
	if err == nil {
		err = e.body()
	}
	if err == nil {
		err = e.matchEvents()
	}
	var o *outcome
	switch {
	case errors.As(err, &o):
		return o.st, o.msg
	case err != nil:
		return Error, err.Error()
	case len(e.failures) > 0:
		return Fail, strings.Join(e.failures, "; ")
	}
	return Pass, ""
}

// prepare checks that every op is supported and every requirement met,
// and picks the session.
func (e *eval) prepare() error {
	body := e.in.Case.Op.Regions[0].Ops
	wantsEvents := false
	for _, op := range body {
		if !supportedOps[op.Name] {
			return skipf("%s: %s is not supported by loomgen's check runner", op.Pos, opSpelling(op))
		}
		switch op.Name {
		case "check.requires", "check.skip_if":
			if err := e.requirement(op); err != nil {
				return err
			}
		case "check.expect.event":
			wantsEvents = true
			e.expects = append(e.expects, op)
		}
	}
	if wantsEvents && e.r.backend != "cpu" {
		return skipf("%s: check.expect.event<device> needs the CPU executor's sanitizer; the %s backend has none", e.expects[0].Pos, e.r.backend)
	}
	e.sanitized = wantsEvents || e.r.opts.Race
	return nil
}

func opSpelling(op *loom.Op) string {
	if op.Param != "" {
		return op.Name + "<" + op.Param + ">"
	}
	return op.Name
}

// requirement evaluates check.requires<provider> {…} (skip unless met) and
// check.skip_if<provider> {…} reason("…") (skip when met). Providers:
// loomgen.backend {name = "cpu"|"cuda"|"hip"}. Any other provider is not
// registered here, which skips the case, as Loom's testbench does.
func (e *eval) requirement(op *loom.Op) error {
	a, err := attrs(op, "reason")
	if err != nil {
		return errorf("%v", err)
	}
	reason := ""
	if l := attr(op, "reason"); l != nil {
		reason = l.Str
	}
	provider := strings.TrimSpace(op.Param)
	var met bool
	switch provider {
	case "loomgen.backend":
		name, ok := a["name"].(string)
		if !ok || len(a) != 1 {
			return errorf("%s: %s takes {name = \"cpu\"|\"cuda\"|\"hip\"}", op.Pos, opSpelling(op))
		}
		met = e.r.backend == name
	default:
		if reason != "" {
			return skipf("%s (%s: provider not registered in loomgen)", reason, opSpelling(op))
		}
		return skipf("%s: %s %s: provider not registered in loomgen", op.Pos, opSpelling(op), formatDict(a))
	}
	switch {
	case op.Name == "check.requires" && !met:
		return skipf("%s: %s %s is not met by the %s backend", op.Pos, opSpelling(op), formatDict(a), e.r.backend)
	case op.Name == "check.skip_if" && met:
		if reason == "" {
			reason = fmt.Sprintf("%s %s", opSpelling(op), formatDict(a))
		}
		return skipf("%s", reason)
	}
	return nil
}

func (e *eval) body() error {
	ss, err := e.r.session(e.sanitized)
	if err != nil {
		return errorf("%v", err)
	}
	e.sess = ss
	params := map[string]loom.Const{}
	for i, p := range e.in.Case.Params {
		params[p.Value] = e.in.Values[i]
	}
	for _, op := range e.in.Case.Op.Regions[0].Ops {
		var err error
		switch op.Name {
		case "check.param.choice", "check.param.range", "check.param.seed":
			e.env[op.Results[0].Name] = params[op.Results[0].Name]
		case "check.literal":
			err = e.literal(op)
		case "check.generate.fill", "check.generate.iota", "check.generate.random.uniform":
			err = e.generate(op)
		case "check.tensor.view":
			err = e.tensorView(op)
		case "func.call":
			err = e.call(op)
		case "check.oracle.call":
			err = e.oracle(op)
		case "check.expect.equal", "check.expect.close", "check.expect.bitwise":
			err = e.expect(op)
		case "check.expect.shape":
			err = e.expectShape(op)
		case "check.return":
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// scalar returns operand i of op as a scalar.
func (e *eval) operand(op *loom.Op, i int) (any, error) {
	if i >= len(op.Operands) {
		return nil, errorf("%s: %s needs %d operands, has %d", op.Pos, op.Name, i+1, len(op.Operands))
	}
	o := op.Operands[i]
	if o.Lit != nil {
		return litConst(o.Lit, nil)
	}
	v, ok := e.env[o.Name]
	if !ok {
		return nil, errorf("%s: %%%s is not a value of this case", o.Pos, o.Name)
	}
	return v, nil
}

func litConst(l *loom.Literal, t *loom.Type) (loom.Const, error) {
	c := loom.Const{Type: t}
	switch l.Kind {
	case loom.LitInt, loom.LitBool:
		c.Int, c.Float = l.Int, float64(l.Int)
	case loom.LitFloat:
		c.Float = l.Float
		if t != nil && t.Kind != loom.TypeFloat {
			return c, fmt.Errorf("%s is not a %s", l.Text, t)
		}
	default:
		return c, fmt.Errorf("%s is not a number", l.Text)
	}
	return c, nil
}

// typeOf resolves a written type's dynamic dims with the case's values.
func (e *eval) shape(op *loom.Op, t *loom.Type) ([]int64, error) {
	out := make([]int64, len(t.Dims))
	for i, d := range t.Dims {
		if d.Value == nil {
			out[i] = d.Size
			continue
		}
		c, ok := e.env[d.Value.Name].(loom.Const)
		if !ok {
			return nil, errorf("%s: dimension %%%s of %s is not a scalar of this case", op.Pos, d.Value.Name, t)
		}
		out[i] = c.Int
	}
	return out, nil
}

func (e *eval) define(op *loom.Op, v any) error {
	if len(op.Results) != 1 {
		return errorf("%s: %s needs one result", op.Pos, op.Name)
	}
	e.env[op.Results[0].Name] = v
	return nil
}

func (e *eval) literal(op *loom.Op) error {
	t := resultType(op)
	l := attr(op, "value")
	if t == nil || l == nil || !t.IsScalar() {
		return errorf("%s: check.literal needs value(…) and a scalar type", op.Pos)
	}
	c, err := litConst(l, t)
	if err != nil {
		return errorf("%s: check.literal: %v", op.Pos, err)
	}
	if (t.Kind == loom.TypeInt) && !fitsInt(c.Int, t.Bits) {
		return errorf("%s: check.literal: %d does not fit %s", op.Pos, c.Int, t)
	}
	if t.Kind == loom.TypeFloat && l.Kind == loom.LitInt {
		c.Float = float64(l.Int)
	}
	return e.define(op, c)
}

// generate materializes check.generate.fill value(v), .iota offset(a)
// step(b) (element i = a + i·b, in the element type), and .random.uniform
// seed(%s) range(lo to hi) (a deterministic splitmix64 stream: the values
// differ from other runners', so expected values must come from an oracle
// or the case itself).
func (e *eval) generate(op *loom.Op) error {
	t := resultType(op)
	if t == nil {
		return errorf("%s: %s needs a result type", op.Pos, op.Name)
	}
	if t.IsScalar() {
		return skipf("%s: %s of a scalar type is not supported by loomgen's check runner (write check.literal)", op.Pos, op.Name)
	}
	if t.Kind != loom.TypeTensor {
		return errorf("%s: %s makes a tensor, not %s", op.Pos, op.Name, t)
	}
	shape, err := e.shape(op, t)
	if err != nil {
		return err
	}
	x, err := newTensor(t.Elem, shape)
	if err != nil {
		return skipf("%s: %v", op.Pos, err)
	}
	num := func(key string) (float64, int64, bool, error) {
		l := attr(op, key)
		if l == nil {
			return 0, 0, false, errorf("%s: %s needs %s(…)", op.Pos, op.Name, key)
		}
		switch l.Kind {
		case loom.LitInt:
			return float64(l.Int), l.Int, true, nil
		case loom.LitFloat:
			if !x.isFloat() {
				return 0, 0, false, errorf("%s: %s: %s(%s) is not an integer for %s", op.Pos, op.Name, key, l.Text, t)
			}
			return l.Float, 0, false, nil
		}
		return 0, 0, false, errorf("%s: %s: %s(%s) is not a number", op.Pos, op.Name, key, l.Text)
	}
	n := x.count()
	switch op.Name {
	case "check.generate.fill":
		f, i, _, err := num("value")
		if err != nil {
			return err
		}
		if !x.isFloat() && !fitsInt(i, t.Elem.Bits) {
			return errorf("%s: check.generate.fill: %d does not fit %s", op.Pos, i, t.Elem)
		}
		for k := range n {
			if x.isFloat() {
				x.setFloat(k, f)
			} else {
				x.setInt(k, i)
			}
		}
	case "check.generate.iota":
		fo, io, _, err := num("offset")
		if err != nil {
			return err
		}
		fs, is, _, err := num("step")
		if err != nil {
			return err
		}
		for k := range n {
			if x.isFloat() {
				x.setFloat(k, fo+float64(k)*fs)
			} else {
				x.setInt(k, io+int64(k)*is) // wraps at the element width
			}
		}
	case "check.generate.random.uniform":
		seed, err := e.operand(op, 0)
		if err != nil {
			return err
		}
		sc, ok := seed.(loom.Const)
		if !ok {
			return errorf("%s: check.generate.random.uniform: seed is not a scalar", op.Pos)
		}
		lo, hi, err := interval(op, "range")
		if err != nil {
			return errorf("%s: check.generate.random.uniform: %v", op.Pos, err)
		}
		state := uint64(sc.Int)
		for k := range n {
			u := float64(splitmix(&state)>>11) / (1 << 53)
			if x.isFloat() {
				x.setFloat(k, lo+u*(hi-lo))
			} else {
				x.setInt(k, int64(lo)+int64(u*(hi-lo+1)))
			}
		}
	}
	return e.define(op, x)
}

func splitmix(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// tensorView is loomgen's check.tensor.view %t offset(o) : T -> U: the
// elements of %t from linear element o on, shaped as U, sharing %t's
// storage (a kernel given the view writes into %t).
func (e *eval) tensorView(op *loom.Op) error {
	src, err := e.operand(op, 0)
	if err != nil {
		return err
	}
	t, ok := src.(*tensor)
	if !ok {
		return errorf("%s: check.tensor.view of a scalar", op.Pos)
	}
	var off int64
	if l := attr(op, "offset"); l != nil && l.Kind == loom.LitInt {
		off = l.Int
	} else if len(op.Operands) > 1 {
		v, err := e.operand(op, 1)
		if err != nil {
			return err
		}
		c, ok := v.(loom.Const)
		if !ok {
			return errorf("%s: check.tensor.view offset is not a scalar", op.Pos)
		}
		off = c.Int
	} else {
		return errorf("%s: check.tensor.view needs offset(…)", op.Pos)
	}
	rt := resultType(op)
	if rt == nil || rt.Kind != loom.TypeTensor {
		return errorf("%s: check.tensor.view needs a tensor result type (: T -> tensor<…>)", op.Pos)
	}
	if rt.Elem.Name != t.elem.Name {
		return errorf("%s: check.tensor.view of %s elements as %s", op.Pos, t.elem, rt.Elem)
	}
	shape, err := e.shape(op, rt)
	if err != nil {
		return err
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	es := int64(t.elem.ByteSize())
	if off < 0 || n < 0 || (off+n)*es > int64(len(t.data)) {
		return failf("%s: check.tensor.view of elements [%d, %d) of a %d-element tensor", op.Pos, off, off+n, t.count())
	}
	v := &tensor{elem: t.elem, shape: shape, root: t.root, off: t.off + int(off*es)}
	v.data = t.root.data[v.off : v.off+int(n*es) : v.off+int(n*es)]
	return e.define(op, v)
}

// call runs func.call @kernel(args): tensors become buffers (their root's
// storage is uploaded before and read back after), scalars are converted
// to the kernel's parameter types, and the grid comes from the kernel's
// launch-config region with the call's workload values. The arguments
// follow the launch signature (workload values are taken from launch
// parameters of the same name), or the union of both signatures in
// declaration order, as generated Dispatch methods take them.
func (e *eval) call(op *loom.Op) error {
	var kd *loom.Kernel
	for _, k := range e.r.suite.Program.Kernels() {
		if k.Symbol == op.Symbol && !k.Decl {
			kd = k
		}
	}
	if kd == nil {
		if f := e.r.suite.Program.Func(op.Symbol); f != nil {
			if f.Kind == "func.def" && f.Body != nil {
				return e.callFunc(op, f)
			}
			return skipf("%s: func.call @%s: only calls of a kernel.def or func.def are supported by loomgen's check runner (@%s is a %s)", op.Pos, op.Symbol, op.Symbol, f.Kind)
		}
		return skipf("%s: func.call @%s: no kernel.def @%s in these sources (is it defined in another module?)", op.Pos, op.Symbol, op.Symbol)
	}
	args := make([]any, len(op.Operands))
	for i := range op.Operands {
		v, err := e.operand(op, i)
		if err != nil {
			return err
		}
		args[i] = v
	}
	byName := map[string]any{}
	var launch []any
	switch union := unionParams(kd); {
	case len(args) == len(kd.Launch):
		for i, p := range kd.Launch {
			byName[p.Name] = args[i]
		}
		launch = args
	case len(args) == len(union):
		for i, p := range union {
			byName[p.Name] = args[i]
		}
		for _, p := range kd.Launch {
			launch = append(launch, byName[p.Name])
		}
	default:
		return errorf("%s: func.call @%s with %d arguments; the kernel takes %d launch arguments (or %d workload and launch arguments)", op.Pos, op.Symbol, len(args), len(kd.Launch), len(union))
	}
	var workload []loom.Const
	for _, w := range kd.Workload {
		v, ok := byName[w.Name]
		if !ok {
			return errorf("%s: func.call @%s: no argument for workload parameter %%%s", op.Pos, op.Symbol, w.Name)
		}
		c, ok := v.(loom.Const)
		if !ok {
			return errorf("%s: func.call @%s: workload parameter %%%s is given a tensor", op.Pos, op.Symbol, w.Name)
		}
		workload = append(workload, convertConst(c, w.Type))
	}
	h, err := e.r.kernel(e.sess, kd)
	if errors.Is(err, interp.ErrUnsupported) || errors.Is(err, ptx.ErrUnsupported) {
		return skipf("%s: func.call @%s: the %s backend does not support the kernel: %v", op.Pos, op.Symbol, e.sess.s.Backend(), err)
	} else if err != nil {
		return errorf("%s: func.call @%s: %v", op.Pos, op.Symbol, err)
	}
	var wargs []loomrt.Arg
	for _, c := range workload {
		a, err := loomrt.ConstArg(c)
		if err != nil {
			return errorf("%s: func.call @%s: %v", op.Pos, op.Symbol, err)
		}
		wargs = append(wargs, a)
	}
	return e.dispatch(op, h, wargs, kd.Launch, launch)
}

// dispatch binds the call's values to the launch parameters, has the
// session check and seal a dispatch of h with them (the grid comes from the
// kernel's launch config), uploads the tensors' storage, runs it and reads
// the storage back. A sanitizer report in a checked session is recorded as
// an event; any other failure fails the case.
func (e *eval) dispatch(op *loom.Op, h loomrt.Kernel, wargs []loomrt.Arg, params []*loom.Value, vals []any) error {
	s := e.sess.s
	var largs []loomrt.Arg
	var roots []*tensor
	var bytes int64
	for i, p := range params {
		a, err := e.arg(op, p, vals[i], &roots)
		if err != nil {
			return err
		}
		if t, ok := vals[i].(*tensor); ok && a.IsBuffer() {
			bytes += int64(len(t.data))
		}
		largs = append(largs, a)
	}
	// The session computes the launch from the kernel's launch config and
	// checks the arguments against its predicates and extents.
	d, err := s.NewDispatch(h, wargs, largs)
	if err != nil {
		return failf("%s: func.call @%s: %v", op.Pos, op.Symbol, err)
	}
	for _, t := range roots {
		if err := s.Upload(e.regions[t], t.data); err != nil {
			return errorf("%s: upload: %v", op.Pos, err)
		}
	}
	runErr := s.Run([]loomrt.Command{d})
	if runErr != nil {
		var re *interp.RunError
		if !e.sanitized || !errors.As(runErr, &re) || re.Event == nil {
			if errors.Is(runErr, loomrt.ErrDevice) {
				e.r.drop(e.sess)
			}
			return failf("%s: func.call @%s: %v", op.Pos, op.Symbol, runErr)
		}
		e.events = append(e.events, re.Event)
	} else {
		e.calls = append(e.calls, d)
		e.bytes += bytes
	}
	for _, t := range roots {
		b, err := s.Read(e.regions[t])
		if err != nil {
			return errorf("%s: read back: %v", op.Pos, err)
		}
		copy(t.data, b)
	}
	return nil
}

// unionParams is the workload signature followed by the launch parameters
// whose names it does not hold: the parameters of a generated Dispatch.
func unionParams(k *loom.Kernel) []*loom.Value {
	out := append([]*loom.Value(nil), k.Workload...)
	seen := map[string]bool{}
	for _, w := range k.Workload {
		seen[w.Name] = true
	}
	for _, p := range k.Launch {
		if !seen[p.Name] {
			out = append(out, p)
		}
	}
	return out
}

// arg converts one call argument for launch parameter p.
func (e *eval) arg(op *loom.Op, p *loom.Value, v any, roots *[]*tensor) (loomrt.Arg, error) {
	switch x := v.(type) {
	case *tensor:
		if p.Type == nil || (p.Type.Kind != loom.TypeBuffer && p.Type.Kind != loom.TypeView) {
			return loomrt.Arg{}, errorf("%s: func.call @%s: a tensor for %%%s: %s", op.Pos, op.Symbol, p.Name, p.Type)
		}
		reg, ok := e.regions[x.root]
		if !ok {
			n := max(len(x.root.data), 1)
			r, err := e.sess.s.Allocate(n)
			if err != nil {
				return loomrt.Arg{}, errorf("%s: allocate %d bytes: %v", op.Pos, n, err)
			}
			if reg, err = r.Slice(0, len(x.root.data)); err != nil {
				return loomrt.Arg{}, errorf("%s: %v", op.Pos, err)
			}
			e.regions[x.root] = reg
			*roots = append(*roots, x.root)
		} else if !slices.Contains(*roots, x.root) {
			*roots = append(*roots, x.root)
		}
		sub, err := reg.Slice(x.off, len(x.data))
		if err != nil {
			return loomrt.Arg{}, errorf("%s: %v", op.Pos, err)
		}
		return loomrt.Buffer(sub.ReadWrite()), nil
	case loom.Const:
		if p.Type == nil || !p.Type.IsScalar() {
			return loomrt.Arg{}, errorf("%s: func.call @%s: a scalar for %%%s: %s", op.Pos, op.Symbol, p.Name, p.Type)
		}
		return scalarArg(convertConst(x, p.Type))
	}
	return loomrt.Arg{}, errorf("%s: func.call @%s: unsupported argument for %%%s", op.Pos, op.Symbol, p.Name)
}

// convertConst gives c the type t, converting between integers and floats.
func convertConst(c loom.Const, t *loom.Type) loom.Const {
	from := c.Type
	out := loom.Const{Type: t, Int: c.Int, Float: c.Float}
	if from != nil && from.Kind == loom.TypeFloat && t.Kind != loom.TypeFloat {
		out.Int = int64(c.Float)
	}
	if (from == nil || from.Kind != loom.TypeFloat) && t.Kind == loom.TypeFloat {
		out.Float = float64(c.Int)
	}
	return out
}

func scalarArg(c loom.Const) (loomrt.Arg, error) {
	t := c.Type
	switch t.Kind {
	case loom.TypeIndex:
		return loomrt.Index(int(c.Int)), nil
	case loom.TypeOffset:
		return loomrt.Offset(uint64(c.Int)), nil
	case loom.TypeInt:
		switch t.Bits {
		case 1:
			return loomrt.I1(c.Int != 0), nil
		case 8:
			return loomrt.I8(int8(c.Int)), nil
		case 16:
			return loomrt.I16(int16(c.Int)), nil
		case 32:
			return loomrt.I32(int32(c.Int)), nil
		case 64:
			return loomrt.I64(c.Int), nil
		}
	case loom.TypeFloat:
		switch t.Name {
		case "f16":
			return loomrt.F16Arg(loomrt.F16From(float32(c.Float))), nil
		case "bf16":
			return loomrt.BF16Arg(loomrt.BF16From(float32(c.Float))), nil
		case "f32":
			return loomrt.F32(float32(c.Float)), nil
		case "f64":
			return loomrt.F64(c.Float), nil
		}
	}
	return loomrt.Arg{}, skipf("scalar arguments of type %s are not supported by loomgen's check runner", t)
}
