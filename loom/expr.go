package loom

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrEval is the class of errors raised while evaluating an expression with
// concrete values: division by zero, a value outside its carrier, a missing
// workload or config value.
var ErrEval = errors.New("loom: evaluation error")

// ExprOp is the operation of an Expr node.
type ExprOp uint8

// Expression operations. Integer arithmetic follows the node's Type: index is
// exact and must fit the target's index carrier, offset is unsigned and must
// not wrap, iN wraps in two's complement. On float types Add, Sub, Mul, Div,
// Neg, Min and Max are the IEEE operations.
const (
	ExprConst        ExprOp = iota // Const
	ExprWorkload                   // Kernel.Workload[Arg]
	ExprLaunch                     // Kernel.Launch[Arg]
	ExprConfig                     // config value Symbol
	ExprSubgroupSize               // target.subgroup.size
	ExprAdd
	ExprSub
	ExprMul
	ExprDiv  // signed (index.div, scalar.divsi): truncating
	ExprDivU // unsigned (scalar.divui)
	ExprRem  // signed remainder
	ExprRemU
	ExprCeilDiv  // scalar.ceildivsi
	ExprCeilDivU // scalar.ceildivui
	ExprMin      // signed, or IEEE minimum on floats
	ExprMax
	ExprMinU
	ExprMaxU
	ExprAnd
	ExprOr
	ExprXor
	ExprShl
	ExprShrS
	ExprShrU
	ExprNeg
	ExprCmp    // Pred: eq ne slt sle sgt sge ult ule ugt uge, or a cmpf predicate
	ExprSelect // Args = [cond, a, b]
	ExprCast   // Pred: index, extsi, extui, trunci, sitofp, uitofp, fptosi, fptoui, extf, fptrunc, bitcast
)

var exprOpNames = [...]string{
	ExprConst: "const", ExprWorkload: "workload", ExprLaunch: "launch", ExprConfig: "config",
	ExprSubgroupSize: "subgroup_size", ExprAdd: "add", ExprSub: "sub", ExprMul: "mul",
	ExprDiv: "div", ExprDivU: "divu", ExprRem: "rem", ExprRemU: "remu", ExprCeilDiv: "ceildiv",
	ExprCeilDivU: "ceildivu", ExprMin: "min", ExprMax: "max", ExprMinU: "minu", ExprMaxU: "maxu",
	ExprAnd: "and", ExprOr: "or", ExprXor: "xor", ExprShl: "shl", ExprShrS: "shrs", ExprShrU: "shru",
	ExprNeg: "neg", ExprCmp: "cmp", ExprSelect: "select", ExprCast: "cast",
}

// String names the operation.
func (o ExprOp) String() string {
	if int(o) < len(exprOpNames) && exprOpNames[o] != "" {
		return exprOpNames[o]
	}
	return "op" + strconv.Itoa(int(o))
}

// Expr is a symbolic expression over workload arguments, launch arguments,
// config values and the target subgroup size. gen prints it as Go; runtime
// evaluates it with Eval. Pos is the source op it came from.
type Expr struct {
	Op     ExprOp
	Type   *Type
	Const  Const
	Arg    int
	Symbol string
	Pred   string
	Args   []*Expr
	Pos    Pos
}

// Env holds the concrete values an Expr may refer to. A zero Target means
// TargetGPU.
type Env struct {
	Workload, Launch []Const
	Config           map[string]Const
	Target           Target
}

// IsConst reports whether e is a literal constant.
func (e *Expr) IsConst() bool { return e != nil && e.Op == ExprConst }

// ExprDeps says what an expression needs to be evaluated.
type ExprDeps struct {
	Workload []int    // workload argument indices, ascending
	Launch   []int    // launch argument indices, ascending
	Config   []string // config symbols, in first-use order
	Subgroup bool     // uses target.subgroup.size
}

// Deps lists the inputs e depends on.
func (e *Expr) Deps() ExprDeps {
	var d ExprDeps
	seenW, seenL, seenC := map[int]bool{}, map[int]bool{}, map[string]bool{}
	var walk func(*Expr)
	walk = func(x *Expr) {
		if x == nil {
			return
		}
		switch x.Op {
		case ExprWorkload:
			if !seenW[x.Arg] {
				seenW[x.Arg] = true
				d.Workload = insertSorted(d.Workload, x.Arg)
			}
		case ExprLaunch:
			if !seenL[x.Arg] {
				seenL[x.Arg] = true
				d.Launch = insertSorted(d.Launch, x.Arg)
			}
		case ExprConfig:
			if !seenC[x.Symbol] {
				seenC[x.Symbol] = true
				d.Config = append(d.Config, x.Symbol)
			}
		case ExprSubgroupSize:
			d.Subgroup = true
		}
		for _, a := range x.Args {
			walk(a)
		}
	}
	walk(e)
	return d
}

func insertSorted(s []int, v int) []int {
	i := len(s)
	for i > 0 && s[i-1] > v {
		i--
	}
	s = append(s, 0)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// String prints e in a compact prefix form, e.g. (add (workload 0) 127:index),
// for goldens and messages.
func (e *Expr) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

func (e *Expr) write(b *strings.Builder) {
	if e == nil {
		b.WriteString("<nil>")
		return
	}
	switch e.Op {
	case ExprConst:
		b.WriteString(e.Const.String())
		if e.Type != nil {
			b.WriteString(":" + e.Type.String())
		}
		return
	case ExprWorkload:
		fmt.Fprintf(b, "w%d", e.Arg)
		return
	case ExprLaunch:
		fmt.Fprintf(b, "l%d", e.Arg)
		return
	case ExprConfig:
		b.WriteString("@" + e.Symbol)
		return
	case ExprSubgroupSize:
		b.WriteString("subgroup_size")
		return
	}
	b.WriteByte('(')
	b.WriteString(e.Op.String())
	if e.Pred != "" {
		b.WriteString(" " + e.Pred)
	}
	for _, a := range e.Args {
		b.WriteByte(' ')
		a.write(b)
	}
	if e.Op == ExprCast && e.Type != nil {
		b.WriteString(" to " + e.Type.String())
	}
	b.WriteByte(')')
}

// evalErr builds a positioned evaluation error.
func evalErr(pos Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Class: ErrEval}
}
