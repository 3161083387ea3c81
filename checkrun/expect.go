package checkrun

import (
	"fmt"
	"math"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// maxListed bounds the mismatching elements one failure message lists.
const maxListed = 4

// expect checks check.expect.equal / .bitwise / .close actual(%a)
// expected(%e); a mismatch is recorded as a failure and the case goes on,
// so one run reports every expectation that fails.
func (e *eval) expect(op *loom.Op) error {
	av, err := e.operand(op, 0)
	if err != nil {
		return err
	}
	ev, err := e.operand(op, 1)
	if err != nil {
		return err
	}
	kind := strings.TrimPrefix(op.Name, "check.expect.")
	var cmp elemCmp
	switch kind {
	case "equal":
		cmp = equalCmp
	case "bitwise":
		cmp = nil // raw bits
	case "close":
		c, err := closeCmp(op)
		if err != nil {
			return err
		}
		cmp = c
	}
	var msg string
	switch a := av.(type) {
	case loom.Const:
		x, ok := ev.(loom.Const)
		if !ok {
			return errorf("%s: %s of a scalar and a tensor", op.Pos, op.Name)
		}
		msg = compareScalars(kind, a, x, cmp)
	case *tensor:
		x, ok := ev.(*tensor)
		if !ok {
			return errorf("%s: %s of a tensor and a scalar", op.Pos, op.Name)
		}
		if a.elem.Name != x.elem.Name || !sameShape(a.shape, x.shape) {
			e.failures = append(e.failures, fmt.Sprintf("%s: %s: actual is %s, expected %s", op.Pos, op.Name, a.typeString(), x.typeString()))
			return nil
		}
		msg = compareTensors(a, x, cmp)
	}
	if msg != "" {
		e.failures = append(e.failures, fmt.Sprintf("%s: %s: %s", op.Pos, op.Name, msg))
	}
	return nil
}

// elemCmp compares one pair of elements (floats as float64, integers as
// int64 converted exactly) and explains a mismatch; "" means they match.
type elemCmp func(got, want float64, isFloat bool) string

func equalCmp(got, want float64, isFloat bool) string {
	if got == want {
		return ""
	}
	return "not equal"
}

// closeCmp builds the comparison of check.expect.close: |got - want| <=
// atol + rtol·|want|; equal infinities match; NaN matches NaN only under
// nan(same).
func closeCmp(op *loom.Op) (elemCmp, error) {
	num := func(key string) (float64, error) {
		l := attr(op, key)
		if l == nil {
			return 0, errorf("%s: check.expect.close needs %s(…)", op.Pos, key)
		}
		v, err := litValue(l)
		if err != nil {
			return 0, errorf("%s: %s: %v", op.Pos, key, err)
		}
		f, ok := number(v)
		if !ok || f < 0 || math.IsNaN(f) {
			return 0, errorf("%s: %s(%s) is not a non-negative number", op.Pos, key, l.Text)
		}
		return f, nil
	}
	atol, err := num("atol")
	if err != nil {
		return nil, err
	}
	rtol, err := num("rtol")
	if err != nil {
		return nil, err
	}
	nan := "same"
	if l := attr(op, "nan"); l != nil {
		nan = l.Str
		if nan == "" {
			nan = l.Text
		}
	} else {
		return nil, errorf("%s: check.expect.close needs nan(same|different)", op.Pos)
	}
	if nan != "same" && nan != "different" {
		return nil, errorf("%s: nan(%s): want same or different", op.Pos, nan)
	}
	return func(got, want float64, isFloat bool) string {
		gn, wn := math.IsNaN(got), math.IsNaN(want)
		switch {
		case gn || wn:
			if gn && wn && nan == "same" {
				return ""
			}
			return fmt.Sprintf("NaN under nan(%s)", nan)
		case got == want:
			return ""
		case math.IsInf(got, 0) || math.IsInf(want, 0):
			return "infinities differ"
		}
		d, tol := math.Abs(got-want), atol+rtol*math.Abs(want)
		if d <= tol {
			return ""
		}
		return fmt.Sprintf("|diff| %g > atol %g + rtol %g·|want| = %g", d, atol, rtol, tol)
	}, nil
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func compareScalars(kind string, a, x loom.Const, cmp elemCmp) string {
	isFloat := a.Type != nil && a.Type.Kind == loom.TypeFloat
	got, want := float64(a.Int), float64(x.Int)
	if isFloat {
		got, want = a.Float, x.Float
	}
	var why string
	switch {
	case cmp == nil:
		if isFloat && math.Float64bits(got) != math.Float64bits(want) || !isFloat && a.Int != x.Int {
			why = "bits differ"
		}
	case !isFloat:
		if a.Int != x.Int {
			why = "not equal"
		}
	default:
		why = cmp(got, want, isFloat)
	}
	if why == "" {
		return ""
	}
	return fmt.Sprintf("got %s, want %s (%s)", constString(a), constString(x), why)
}

// compareTensors lists the first mismatching elements and counts them all.
func compareTensors(a, x *tensor, cmp elemCmp) string {
	var bad []string
	n := 0
	for i := range a.count() {
		var why string
		switch {
		case cmp == nil:
			if a.bits(i) != x.bits(i) {
				why = fmt.Sprintf("bits %#x, want %#x", a.bits(i), x.bits(i))
			}
		case a.isFloat():
			why = cmp(a.float(i), x.float(i), true)
		default:
			if a.int(i) != x.int(i) {
				why = "not equal"
			}
		}
		if why == "" {
			continue
		}
		n++
		if len(bad) < maxListed {
			bad = append(bad, fmt.Sprintf("element %s: got %s, want %s (%s)", a.index(i), a.elemString(i), x.elemString(i), why))
		}
	}
	if n == 0 {
		return ""
	}
	more := ""
	if n > len(bad) {
		more = fmt.Sprintf("; %d more", n-len(bad))
	}
	return fmt.Sprintf("%d of %d elements differ: %s%s", n, a.count(), strings.Join(bad, "; "), more)
}

// expectShape checks check.expect.shape value(%v) shape([d, …]).
func (e *eval) expectShape(op *loom.Op) error {
	v, err := e.operand(op, 0)
	if err != nil {
		return err
	}
	t, ok := v.(*tensor)
	if !ok {
		return errorf("%s: check.expect.shape of a scalar", op.Pos)
	}
	l := attr(op, "shape")
	if l == nil {
		return errorf("%s: check.expect.shape needs shape([…])", op.Pos)
	}
	// shape([%m, 4]): static sizes and scalars of the case.
	inner := strings.Trim(strings.TrimSpace(l.Text), "[]")
	var want []int64
	for _, f := range strings.Split(inner, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.HasPrefix(f, "%") {
			c, ok := e.env[f[1:]].(loom.Const)
			if !ok {
				return errorf("%s: shape dimension %s is not a scalar", op.Pos, f)
			}
			want = append(want, c.Int)
			continue
		}
		v, err := litValue(&loom.Literal{Kind: loom.LitRaw, Text: f})
		n, ok := v.(int64)
		if err != nil || !ok {
			return errorf("%s: shape dimension %s is not an integer", op.Pos, f)
		}
		want = append(want, n)
	}
	if !sameShape(t.shape, want) {
		e.failures = append(e.failures, fmt.Sprintf("%s: check.expect.shape: shape %v, want %v", op.Pos, t.shape, want))
	}
	return nil
}
