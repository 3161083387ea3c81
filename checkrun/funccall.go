package checkrun

import (
	"errors"
	"fmt"
	"strings"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
	"github.com/loomgen/loomgen/loom/ptx"
	loomrt "github.com/loomgen/loomgen/runtime"
)

// callFunc runs func.call of a func.def (check cases may call ordinary
// functions, not just kernels) on the backend: the runner writes a kernel
// of one invocation that calls the function with its launch arguments and
// stores each result into a one-element buffer, then reads them back.
// Scalar and buffer parameters and integer or float results are supported.
func (e *eval) callFunc(op *loom.Op, f *loom.Func) error {
	if len(op.Operands) != len(f.Params) {
		return errorf("%s: func.call @%s with %d arguments; it takes %d", op.Pos, f.Symbol, len(op.Operands), len(f.Params))
	}
	if len(op.Results) != len(f.Results) {
		return errorf("%s: func.call @%s defines %d results; it returns %d", op.Pos, f.Symbol, len(op.Results), len(f.Results))
	}
	export := "loomgen_check_call." + f.Symbol
	var params, callArgs, callTypes, stores []string
	var launch []*loom.Value
	var vals []any
	for i, p := range f.Params {
		v, err := e.operand(op, i)
		if err != nil {
			return err
		}
		t := p.Type
		switch {
		case t != nil && t.IsScalar():
		case t != nil && t.Kind == loom.TypeBuffer:
		default:
			return skipf("%s: func.call @%s: parameter %%%s of type %s is not supported by loomgen's check runner (scalars and buffers are)", op.Pos, f.Symbol, p.Name, t)
		}
		name := fmt.Sprintf("arg%d", i)
		params = append(params, fmt.Sprintf("%%%s: %s", name, t))
		callArgs = append(callArgs, "%"+name)
		callTypes = append(callTypes, t.String())
		launch = append(launch, &loom.Value{Name: name, Type: t})
		vals = append(vals, v)
	}
	var outs []*tensor
	var results []string
	for i, t := range f.Results {
		if !(t.Kind == loom.TypeInt && t.Bits >= 8) && t.Kind != loom.TypeFloat {
			return skipf("%s: func.call @%s: result %d of type %s is not supported by loomgen's check runner (integers of 8 bits and up, and floats, are)", op.Pos, f.Symbol, i, t)
		}
		out, err := newTensor(t, []int64{1})
		if err != nil {
			return skipf("%s: %v", op.Pos, err)
		}
		outs = append(outs, out)
		name := fmt.Sprintf("res%d", i)
		params = append(params, fmt.Sprintf("%%%s: buffer", name))
		launch = append(launch, &loom.Value{Name: name, Type: &loom.Type{Kind: loom.TypeBuffer, Name: "buffer"}})
		vals = append(vals, out)
		results = append(results, fmt.Sprintf("%%r%d", i))
		stores = append(stores, fmt.Sprintf("  %%v%d = buffer.view %%%s[%%zo] : buffer -> view<1x%s>\n  view.store %%r%d, %%v%d[%%zi] : %s, view<1x%s>\n", i, name, t, i, i, t, t))
	}
	var call string
	if len(results) > 0 {
		resultTypes := make([]string, len(f.Results))
		for i, t := range f.Results {
			resultTypes[i] = t.String()
		}
		call = fmt.Sprintf("  %s = func.call @%s(%s) : (%s) -> (%s)\n", strings.Join(results, ", "), f.Symbol, strings.Join(callArgs, ", "), strings.Join(callTypes, ", "), strings.Join(resultTypes, ", "))
	} else {
		call = fmt.Sprintf("  func.call @%s(%s) : (%s)\n", f.Symbol, strings.Join(callArgs, ", "), strings.Join(callTypes, ", "))
	}
	src := fmt.Sprintf(`kernel.def export(%q) @%s() {
  %%one = index.constant 1 : index
  kernel.launch.config workgroups(%%one, %%one, %%one) workgroup_size(%%one, %%one, %%one) : index
} launch(%s) {
  %%zo = index.constant 0 : offset
  %%zi = index.constant 0 : index
%s%s  kernel.return
}
`, export, export, strings.Join(params, ", "), call, strings.Join(stores, ""))
	wrapper := &loomrt.Source{Name: "loomgen-check-call-" + f.Symbol + ".loom", Text: []byte(src)}
	h, err := e.r.compile(e.sess, export, wrapper)
	if errors.Is(err, interp.ErrUnsupported) || errors.Is(err, ptx.ErrUnsupported) {
		return skipf("%s: func.call @%s: the %s backend does not support the function: %v", op.Pos, f.Symbol, e.sess.s.Backend(), err)
	} else if err != nil {
		return errorf("%s: func.call @%s: %v", op.Pos, f.Symbol, err)
	}
	if err := e.dispatch(op, h, nil, launch, vals); err != nil {
		return err
	}
	for i, out := range outs {
		c := loom.Const{Type: f.Results[i]}
		if out.isFloat() {
			c.Float = out.float(0)
		} else {
			c.Int = out.int(0)
		}
		e.env[op.Results[i].Name] = c
	}
	return nil
}
