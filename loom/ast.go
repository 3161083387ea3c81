package loom

import (
	"fmt"
	"strings"
)

// Pos is a position in a Loom source file. Line and Col are 1-based (Col
// counts bytes); Offset is the 0-based byte offset. The zero Pos is unknown.
type Pos struct {
	File   string
	Offset int
	Line   int
	Col    int
}

// IsValid reports whether the position is known.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String formats the position as file:line:col, the prefix of every error.
func (p Pos) String() string {
	if !p.IsValid() {
		if p.File != "" {
			return p.File
		}
		return "-"
	}
	if p.File == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Module is one parsed .loom file: a flat sequence of top-level operations,
// with the declarations the tools need indexed by kind, in source order.
type Module struct {
	File string
	// Ops holds every top-level operation in source order, including those
	// also indexed below.
	Ops         []*Op
	Kernels     []*Kernel
	Funcs       []*Func
	ConfigDecls []*ConfigDecl
	ConfigDefs  []*ConfigDef
	Imports     []*Import
	// Aliases are the top-level attribute aliases (`#q8 = #q8_0<block=32>`),
	// in source order.
	Aliases []*Alias
	// Globals are the global.constant and global.variable definitions.
	Globals []*Global
}

// Alias is a top-level attribute alias `#name = #attr<…>`. Types that
// name it as their encoding or layout are resolved to Value by the checker.
type Alias struct {
	Pos   Pos
	Name  string // with '#'
	Value string // the aliased attribute's spelling, with '#'
}

// Global is `global.constant @sym : T [where [preds]] [= init]` or the
// same with global.variable. The dynamic dimensions and encoding names of
// T are local to the declaration: Dims binds them, and Preds may use them.
type Global struct {
	Op      *Op
	Symbol  string // without '@'
	Mutable bool   // global.variable
	Type    *Type
	Dims    []*Value // the declaration-local names bound by Type, in order
	Preds   []*Pred
	Init    *Literal // the `= value` initializer, nil when absent
	Doc     string
}

// Kernel is a kernel.def (or a bodyless kernel.decl when Decl is set).
type Kernel struct {
	Op     *Op    // the kernel.def / kernel.decl operation
	Symbol string // without '@'
	// Export is the export("…") name; when absent it is the symbol name.
	Export string
	// HasExport reports whether export("…") was written.
	HasExport bool
	Retain    bool
	Target    string // target(@t) symbol without '@', or ""
	Linkage   string // linkage(…) word or export(…, {linkage = …}), or ""
	Decl      bool   // kernel.decl: no regions
	// Doc is the text of the // comment lines directly above the kernel,
	// without the slashes and one leading space, joined by newlines.
	Doc string
	// Workload and Launch are the two signatures. For a kernel.def they are
	// also the arguments of Config and Body.
	Workload []*Value
	Launch   []*Value
	// WorkloadWhere and LaunchWhere are the `where [...]` predicates written
	// after each signature.
	WorkloadWhere []*Pred
	LaunchWhere   []*Pred
	Config        *Region // launch-config region, ending in kernel.launch.config; nil for a decl
	Body          *Region // device body; nil for a decl
}

// Func is a func.def/func.decl, a template provider (template.def<@fam>,
// func.template<key>, func.ukernel<key>) or a template family
// (template.decl, func.provider.decl<key>).
type Func struct {
	Op        *Op
	Kind      string   // the op name: "func.def", "func.decl", "template.def", ...
	Symbol    string   // without '@'
	Family    string   // template.def<@fam>: "fam"; func.template<key>: "key"; "" otherwise
	Modifiers []string // bare modifier words in order: public, pure, inline, host, ...
	Export    string
	Params    []*Value
	Results   []*Type // the `-> (…)` list
	// ResultSigs names or ties entries of Results (`%idx: index`,
	// `%input as T`); it is Op.ResultSigs.
	ResultSigs []*ResultSig
	Where      []*Pred
	Priority   int64   // priority(N) of a template provider, 0 when absent
	Body       *Region // nil when bodyless
	Doc        string
}

// HasModifier reports whether the bare word m was written on the header.
func (f *Func) HasModifier(m string) bool {
	for _, x := range f.Modifiers {
		if x == m {
			return true
		}
	}
	return false
}

// ConfigDecl is `config.decl @sym : [%name:] type [where [preds]]`.
type ConfigDecl struct {
	Op     *Op
	Symbol string // without '@', e.g. "demo.rows"
	Type   *Type
	// Bind is the optional %name bound inside Preds; nil when absent.
	Bind  *Value
	Preds []*Pred
	Doc   string
}

// ConfigDef is `config.def @sym = literal : type`.
type ConfigDef struct {
	Op     *Op
	Symbol string
	Value  Literal
	Type   *Type
}

// Import is `module.import "key" [@sym, ...]`.
type Import struct {
	Op      *Op
	Key     string
	Symbols []string
}

// Value is an SSA value: an op result, a region (block) argument, or a
// signature parameter.
type Value struct {
	Name  string // without '%'
	Type  *Type  // nil when the syntax does not state it
	Pos   Pos
	Def   *Op     // defining op for a result; nil for an argument
	Owner *Region // region whose argument this is; nil for a result
	Index int     // result index, or argument index
}

// Operand is one operand of an op: an SSA use or, where the syntax allows
// one (subview offsets, vector.slice positions), an inline literal.
type Operand struct {
	Pos   Pos
	Name  string   // SSA name without '%'; "" for a literal
	Value *Value   // the definition, resolved by the checker
	Lit   *Literal // set for an inline literal
}

// IsLiteral reports whether the operand is an inline literal.
func (o *Operand) IsLiteral() bool { return o.Lit != nil }

// LitKind classifies a Literal.
type LitKind uint8

// Literal kinds.
const (
	LitInt LitKind = iota + 1
	LitFloat
	LitBool
	LitString
	LitWord // a bare enum word such as acq_rel or inclusive
	LitRaw  // anything else, kept as its source text (arrays, dicts, #attrs)
)

// Literal is a constant written in the source.
type Literal struct {
	Kind  LitKind
	Text  string // source spelling
	Int   int64  // LitInt (hex included), LitBool (0/1)
	Float float64
	Str   string // LitString (unescaped), LitWord
}

// Attr is a `key = value` entry of an attribute dictionary, or a keyword
// clause with a parenthesized argument such as align(64), scope(workgroup),
// ordering(acq_rel), pipeline(%d), unroll(4); for those Value holds the
// argument (an SSA argument is also listed in Op.Operands).
type Attr struct {
	Pos   Pos
	Key   string
	Value Literal
}

// Pred is a predicate such as range(%v, 1, 4096) or mul(%v, 16), used by
// where clauses, index.assume, scalar.assume and config.decl.
type Pred struct {
	Pos  Pos
	Name string
	Args []*Operand
}

// Region is a brace-delimited block. Label names successor regions:
// "" for the first region, then "else", "do", "launch", "case", "default".
type Region struct {
	Pos   Pos
	Label string
	// Case is the value of a `case N { … }` region of scf.switch.
	Case int64
	Args []*Value
	Ops  []*Op
	End  Pos // position of the closing brace
}

// Op is one operation: a top-level declaration or a statement in a region.
//
// Every op keeps its generic parts (results, name, angle parameter, operands,
// attributes, predicates, types, regions). How each operand list is laid out
// is per-op and documented in the parser (see opsyntax.go); the common rule
// is that Operands lists SSA uses in textual order, with the indices of
// `%v[%i, %j]` following %v, excluding uses inside types and regions.
type Op struct {
	Pos     Pos
	End     Pos // position just after the op's last token
	Name    string
	Results []*Value
	// Param is the raw text inside the <…> directly after the op name:
	// "x" (kernel.workgroup.id<x>), "addf", "workgroup", "@fam", "nsw".
	Param string
	// Symbol is the @symbol the op defines or refers to, without '@'
	// (kernel.def, func.def, config.decl/def/get, func.call, template.apply).
	Symbol string
	// Pred is a leading predicate word (index.cmp ult, scalar.cmpf olt).
	Pred string
	// Words are other bare words of the operand syntax, in order
	// (modifiers like pure or volatile, connectives like from, into, to).
	Words    []string
	Operands []*Operand
	// Literal is the constant of *.constant and config.def.
	Literal *Literal
	// Str is a string operand (kernel.assert message, module.import key).
	Str   string
	Attrs []*Attr
	Preds []*Pred
	// Types are the types after ':'; ResultTypes those after '->' or the
	// target type of a `: A to B` cast.
	Types       []*Type
	ResultTypes []*Type
	// ResultSigs holds the entries of a `-> (…)` list that are named
	// (`%n: index`) or tied to an argument or operand (`%x as T`).
	ResultSigs []*ResultSig
	Regions    []*Region
	// Cases are the table rows of scf.lookup; the default row has Default set.
	Cases []*LookupCase
	// Opaque is set when the parser kept the op as a balanced token span
	// without op-specific structure; Operands then lists every SSA use
	// found in it and Results its definitions.
	Opaque bool
	// Refused is set by Lower on an op it leaves to the backends as
	// opaque, with why it has no rewrite for this form (an encoding family
	// it does not know); a backend reaching the op refuses it with this.
	Refused string
	// Doc is the text of the // comment lines directly above the op.
	Doc string
	// Loc is the loc(…) annotation written after the op, or nil.
	Loc *Loc
	// LaunchWorkload is, for kernel.launch, how many leading Operands are
	// the bracketed workload values of `@k[%n](…)`, and -1 for the older
	// form without brackets; the rest are launch values. It is zero for
	// every other op.
	LaunchWorkload int
}

// ResultSig is a named or tied entry of a `-> (…)` result list. A named
// result `%count: index` defines Value, visible only in the signature (its
// other result types and where clause); a tied result `%input as T` is the
// argument or operand Tied, possibly retyped: the result aliases it.
type ResultSig struct {
	Pos   Pos
	Index int      // position in the ResultTypes list
	Value *Value   // named result; nil otherwise
	Tied  *Operand // tied result; nil otherwise
}

// LookupCase is one row of scf.lookup: `key = (%a, %b)` or `default(%a, %b)`.
type LookupCase struct {
	Pos     Pos
	Key     int64
	Default bool
	Values  []*Operand
}

// Attr returns the attribute with the given key, or nil.
func (o *Op) Attr(key string) *Attr {
	for _, a := range o.Attrs {
		if a.Key == key {
			return a
		}
	}
	return nil
}

// HasWord reports whether the bare word w appears in the operand syntax.
func (o *Op) HasWord(w string) bool {
	for _, x := range o.Words {
		if x == w {
			return true
		}
	}
	return false
}

// TypeKind classifies a Type.
type TypeKind uint8

// Type kinds.
const (
	TypeInt    TypeKind = iota + 1 // i1, i8, i16, i32, i64
	TypeFloat                      // f8E4M3, f8E5M2, f16, bf16, f32, f64
	TypeIndex                      // index
	TypeOffset                     // offset
	TypeBuffer                     // buffer
	TypeView                       // view<…>
	TypeVector                     // vector<…>
	TypeTensor                     // tensor<…>
	TypeTile                       // tile<…>
	TypeOther                      // encoding<…>, group<…>, pool<…>, hal.buffer, reg<…>, …
	TypeFunc                       // a function type (f32, i32) -> (f32)
)

// Type is a Loom type as written.
type Type struct {
	Pos  Pos
	Kind TypeKind
	// Name is the scalar name ("f32", "index", "buffer"), the shaped kind
	// ("view", "vector", …), or the full spelling of an other type.
	Name string
	// Bits is the bit width of an int or float type (1..64); 0 otherwise.
	Bits int
	// Dims and Elem describe a shaped type: static dims have Value nil.
	Dims []Dim
	Elem *Type
	// Layout is the attachment after the comma of a view or tensor:
	// "#dense", "#ggml.q4_0", or "%enc" (then LayoutValue is set).
	Layout      string
	LayoutValue *Operand
	// Alias is the alias name written as the attachment (`#q8`) when Layout
	// holds what it stands for; "" when the attachment was spelled out.
	Alias string
	// Params and Results are the argument and result types of a function
	// type.
	Params, Results []*Type
}

// Dim is one dimension of a shaped type: a static size or an SSA index value.
type Dim struct {
	Size  int64    // static size; meaningless when Value != nil
	Value *Operand // dynamic dimension [%n]
}

// IsScalar reports whether t is an int, float, index or offset type.
func (t *Type) IsScalar() bool {
	switch t.Kind {
	case TypeInt, TypeFloat, TypeIndex, TypeOffset:
		return true
	}
	return false
}

// IsShaped reports whether t is a view, vector, tensor or tile.
func (t *Type) IsShaped() bool {
	switch t.Kind {
	case TypeView, TypeVector, TypeTensor, TypeTile:
		return true
	}
	return false
}

// ByteSize is the size in memory of one scalar of type t: 1 for i1, i8 and
// the fp8 types, up to 8 for 64-bit types; index and offset report 0 because
// their width is a target property.
func (t *Type) ByteSize() int {
	switch t.Kind {
	case TypeInt, TypeFloat:
		if t.Bits <= 8 {
			return 1
		}
		return t.Bits / 8
	}
	return 0
}

// String spells the type in Loom syntax.
func (t *Type) String() string {
	if t == nil {
		return "<nil>"
	}
	if t.Kind == TypeFunc {
		return "(" + joinTypes(t.Params) + ") -> (" + joinTypes(t.Results) + ")"
	}
	if !t.IsShaped() {
		if len(t.Dims) > 0 {
			// pool<[%m]>: a shape without an element type.
			return t.Name + "<" + strings.TrimSuffix(dimsString(t.Dims), "x") + ">"
		}
		return t.Name
	}
	var b strings.Builder
	b.WriteString(t.Name)
	b.WriteByte('<')
	b.WriteString(dimsString(t.Dims))
	b.WriteString(t.Elem.String())
	if t.Layout != "" {
		b.WriteString(", " + t.Layout)
	}
	b.WriteByte('>')
	return b.String()
}

// dimsString spells dimensions each followed by 'x': "4x[%n]x".
func dimsString(dims []Dim) string {
	var b strings.Builder
	for _, d := range dims {
		switch {
		case d.Value != nil:
			b.WriteString("[%" + d.Value.Name + "]")
		case d.Size < 0:
			b.WriteByte('?')
		default:
			fmt.Fprintf(&b, "%d", d.Size)
		}
		b.WriteByte('x')
	}
	return b.String()
}

func joinTypes(ts []*Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, ", ")
}

// Const is a host-side value of a scalar Loom type: a workload argument, a
// config value, or a folded constant. Integers, index, offset and i1 use Int
// (offset values are stored as their two's-complement bit pattern); floats
// use Float.
type Const struct {
	Type  *Type
	Int   int64
	Float float64
}
