package loom

import "fmt"

// Access is what a kernel may do to the storage behind a buffer or view
// parameter. It is a may-analysis: AccessWrite means "may write, never
// reads", and the host must still preserve the old contents (a partial
// write is possible), so write maps to mutable, never to discard.
type Access uint8

// Access modes; AccessReadWrite is AccessRead|AccessWrite.
const (
	AccessNone Access = iota
	AccessRead
	AccessWrite
	AccessReadWrite
)

// String spells the mode as loomgen prints it.
func (a Access) String() string {
	switch a {
	case AccessNone:
		return "none"
	case AccessRead:
		return "read"
	case AccessWrite:
		return "write"
	case AccessReadWrite:
		return "read_write"
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// Covers reports whether a permits everything b does: a binding declared a
// may be used where the kernel body needs b.
func (a Access) Covers(b Access) bool { return a&b == b }

// Reads reports whether the mode includes reading.
func (a Access) Reads() bool { return a&AccessRead != 0 }

// Writes reports whether the mode includes writing.
func (a Access) Writes() bool { return a&AccessWrite != 0 }

// Basis says how an access was established, from strongest to weakest.
type Basis uint8

// Bases of an access.
const (
	// BasisExact: a memory op in the kernel body touches the parameter.
	BasisExact Basis = iota
	// BasisCall: a memory op in a called function or template provider does.
	BasisCall
	// BasisConservative: the parameter reaches something opaque (a bodyless
	// declaration, an unknown op, low.invoke, an unresolved template), so it
	// is assumed read and written.
	BasisConservative
)

// String spells the basis.
func (b Basis) String() string {
	switch b {
	case BasisExact:
		return "exact"
	case BasisCall:
		return "call"
	case BasisConservative:
		return "conservative"
	}
	return "invalid"
}

// Evidence is one op that touches a parameter (directly or through a call).
type Evidence struct {
	Pos    Pos
	Op     string // op name; calls add the callee: "func.call @helper"
	Effect Access
	Basis  Basis
	Reason string // for calls, what the callee does; for conservative, why
}

// ParamAccess is the inferred access of one buffer or view launch parameter.
type ParamAccess struct {
	Param    *Value // the launch parameter (type buffer or view<…>)
	Index    int    // its position in Kernel.Launch
	Access   Access
	Basis    Basis      // the weakest basis among the evidence
	Evidence []Evidence // ops (with positions) that touched it, in source order
	// Elem is the element type when every view derived from the parameter
	// has that one element type (and nothing opaque sees it); nil otherwise.
	Elem *Type
}

// Alignment is the byte alignment a binding of the parameter must have:
// the element size of its views when they share one element type (a
// power of two: 1 to 8), else 1. Dispatch refuses a binding at another
// offset, and the PTX backend relies on it to access the views' elements
// with single instructions (Loom's targets likewise require naturally
// aligned element accesses).
func (a ParamAccess) Alignment() int {
	if a.Elem == nil || a.Elem.ByteSize() <= 1 {
		return 1
	}
	return a.Elem.ByteSize()
}

// isMemoryParam reports whether a launch parameter carries storage.
func isMemoryParam(v *Value) bool {
	return v != nil && v.Type != nil && (v.Type.Kind == TypeBuffer || v.Type.Kind == TypeView)
}

// Access infers, for every buffer or view launch parameter of k in launch
// order, whether the kernel body may read or write its storage (LOOM.md
// §5.3). Aliases are followed through views, assumes, selects, structured
// control flow and calls into visible function bodies; template applies take
// the union over the visible providers; anything opaque is read_write with a
// reason. The result is memoized and shared: do not modify it.
func (p *Program) Access(k *Kernel) []ParamAccess {
	if k == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.access[k]; ok {
		return r
	}
	var out []ParamAccess
	var r *bodyResult
	if k.Body != nil {
		a := &analyzer{p: p}
		r = a.analyzeBody(k.Body, bodyArgs(k.Body.Args, k.Launch))
		p.bodies[k] = r
	}
	for i, v := range k.Launch {
		if !isMemoryParam(v) {
			continue
		}
		pa := ParamAccess{Param: v, Index: i}
		if r != nil {
			pa.Access = r.access[i]
			pa.Evidence = r.evidence[i]
			pa.Basis = weakest(pa.Evidence)
			pa.Elem = r.elem(i)
		} else {
			// A kernel.decl has no body to inspect.
			pa.Access = AccessReadWrite
			pa.Basis = BasisConservative
			pa.Evidence = []Evidence{{Pos: opPos(k.Op), Op: opName(k.Op), Effect: AccessReadWrite,
				Basis: BasisConservative, Reason: "kernel.decl has no body to analyse"}}
		}
		if v.Type.Kind == TypeView && pa.Elem == nil && r != nil && !r.opaque[i] && len(r.elems[i]) <= 1 {
			pa.Elem = v.Type.Elem
		}
		out = append(out, pa)
	}
	p.access[k] = out
	return out
}

func opName(o *Op) string {
	if o == nil {
		return ""
	}
	return o.Name
}

func weakest(ev []Evidence) Basis {
	b := BasisExact
	for _, e := range ev {
		if e.Basis > b {
			b = e.Basis
		}
	}
	return b
}

// bodyArgs returns the values that stand for the signature's parameters:
// the region's arguments, or the signature values when the region has none.
func bodyArgs(regionArgs, sig []*Value) [][]*Value {
	n := max(len(regionArgs), len(sig))
	out := make([][]*Value, n)
	for i := 0; i < n; i++ {
		if i < len(regionArgs) && regionArgs[i] != nil {
			out[i] = append(out[i], regionArgs[i])
		}
		if i < len(sig) && sig[i] != nil && (i >= len(regionArgs) || sig[i] != regionArgs[i]) {
			out[i] = append(out[i], sig[i])
		}
	}
	return out
}
