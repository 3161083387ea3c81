package loom

import (
	"errors"
	"testing"
)

func TestParseConst(t *testing.T) {
	tests := []struct {
		ty, text, want string
		wantErr        bool
	}{
		{"index", "256", "256", false},
		{"index", "-3", "-3", false},
		{"index", "0x10", "16", false},
		{"offset", "18446744073709551615", "18446744073709551615", false},
		{"offset", "-1", "", true},
		{"i1", "true", "true", false},
		{"i1", "0", "false", false},
		{"i1", "yes", "", true},
		{"i8", "255", "-1", false},
		{"i8", "256", "", true},
		{"i32", "-2147483648", "-2147483648", false},
		{"f32", "1.5", "1.5", false},
		{"f32", "2", "2.0", false},
		{"f64", "-0.0", "-0.0", false},
		{"f32", "1e-3", "0.001", false},
		{"f32", "nan", "nan", false},
		{"f32", "x", "", true},
		{"index", "", "", true},
		{"index", "99999999999999999999", "", true},
	}
	for _, tc := range tests {
		c, err := ParseConst(scalarTypeNamed(tc.ty), tc.text)
		if tc.wantErr {
			if err == nil || !errors.Is(err, ErrConst) {
				t.Errorf("ParseConst(%s, %q) = %v, %v; want ErrConst", tc.ty, tc.text, c, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseConst(%s, %q): %v", tc.ty, tc.text, err)
			continue
		}
		if got := c.String(); got != tc.want {
			t.Errorf("ParseConst(%s, %q).String() = %q, want %q", tc.ty, tc.text, got, tc.want)
		}
	}
	if _, err := ParseConst(&Type{Kind: TypeBuffer, Name: "buffer"}, "1"); err == nil {
		t.Error("buffer constant accepted")
	}
}

func TestExprEvalCarriers(t *testing.T) {
	i32 := scalarTypeNamed("i32")
	k := func(ty *Type, v int64) *Expr { return &Expr{Op: ExprConst, Type: ty, Const: Const{Type: ty, Int: v}} }
	tests := []struct {
		e       *Expr
		want    int64
		wantErr bool
	}{
		{&Expr{Op: ExprAdd, Type: i32, Args: []*Expr{k(i32, 2147483647), k(i32, 1)}}, -2147483648, false},
		{&Expr{Op: ExprAdd, Type: typeIndex, Args: []*Expr{k(typeIndex, 2147483647), k(typeIndex, 1)}}, 0, true},
		{&Expr{Op: ExprSub, Type: typeOffset, Args: []*Expr{k(typeOffset, 1), k(typeOffset, 2)}}, 0, true},
		{&Expr{Op: ExprCeilDiv, Type: typeIndex, Args: []*Expr{k(typeIndex, 7), k(typeIndex, 2)}}, 4, false},
		{&Expr{Op: ExprRem, Type: i32, Args: []*Expr{k(i32, 7), k(i32, 0)}}, 0, true},
		{&Expr{Op: ExprShrU, Type: i32, Args: []*Expr{k(i32, -1), k(i32, 28)}}, 15, false},
		{&Expr{Op: ExprCmp, Pred: "ult", Type: typeBool, Args: []*Expr{k(i32, -1), k(i32, 1)}}, 0, false},
		{&Expr{Op: ExprCast, Pred: "index", Type: typeOffset, Args: []*Expr{k(typeIndex, -1)}}, 0, true},
		{&Expr{Op: ExprCast, Pred: "extui", Type: scalarTypeNamed("i64"), Args: []*Expr{k(i32, -1)}}, 4294967295, false},
		{&Expr{Op: ExprSelect, Type: typeIndex, Args: []*Expr{k(typeBool, 1), k(typeIndex, 3), k(typeIndex, 4)}}, 3, false},
		{&Expr{Op: ExprWorkload, Type: typeIndex, Arg: 2}, 0, true},
		{&Expr{Op: ExprConfig, Type: typeIndex, Symbol: "x"}, 0, true},
	}
	for i, tc := range tests {
		c, err := tc.e.Eval(nil)
		if tc.wantErr {
			if !errors.Is(err, ErrEval) {
				t.Errorf("%d: %s = %v, %v; want ErrEval", i, tc.e, c, err)
			}
			continue
		}
		if err != nil || c.Int != tc.want {
			t.Errorf("%d: %s = %d, %v; want %d", i, tc.e, c.Int, err, tc.want)
		}
	}
}
