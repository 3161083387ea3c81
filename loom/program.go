package loom

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrNoKernel is returned by Program.Kernel when no kernel has the export name.
var ErrNoKernel = errors.New("loom: no such kernel")

// ErrDuplicate is the class of errors about a symbol defined by two modules
// of one Program.
var ErrDuplicate = errors.New("loom: duplicate symbol")

// ErrNotEvaluable is the class of errors about source the host-side
// evaluator cannot translate (an op that is not pure arithmetic, a value that
// depends on device state).
var ErrNotEvaluable = errors.New("loom: not evaluable")

// Program is the symbol universe over one or more modules: the functions,
// template providers and config declarations of every module are visible
// to the analyses of every kernel, and kernels are looked up by export name.
// Its methods are safe for concurrent use; results are memoized.
type Program struct {
	Modules []*Module

	kernels     map[string]*Kernel
	kernelOrder []*Kernel
	funcs       map[string]*Func   // func.def with a body wins over a declaration
	families    map[string][]*Func // template family → providers, in source order
	configDecls map[string]*ConfigDecl
	configDefs  map[string]*ConfigDef

	mu        sync.Mutex
	summaries map[*Func]*funcSummary
	access    map[*Kernel][]ParamAccess
	launch    map[*Kernel]launchMemo
	extents   map[*Kernel][]Extent
	bodies    map[*Kernel]*bodyResult

	configTextOnce sync.Once
	configText     string // configFingerprint's text
}

type launchMemo struct {
	l   *LaunchExprs
	err error
}

// NewProgram indexes the modules. Two definitions of one function, kernel
// export, or config.def with different values are an error (class
// ErrDuplicate) naming both positions; declarations may repeat.
func NewProgram(mods ...*Module) (*Program, error) {
	p := &Program{
		kernels:     map[string]*Kernel{},
		funcs:       map[string]*Func{},
		families:    map[string][]*Func{},
		configDecls: map[string]*ConfigDecl{},
		configDefs:  map[string]*ConfigDef{},
		summaries:   map[*Func]*funcSummary{},
		access:      map[*Kernel][]ParamAccess{},
		launch:      map[*Kernel]launchMemo{},
		extents:     map[*Kernel][]Extent{},
		bodies:      map[*Kernel]*bodyResult{},
	}
	var errs ErrorList
	dup := func(pos Pos, what, name string, prev Pos) {
		errs = append(errs, &Error{Pos: pos, Class: ErrDuplicate,
			Msg: fmt.Sprintf("%s %s is already defined at %s", what, name, prev)})
	}
	kernelSyms := map[string]*Kernel{}
	for _, m := range mods {
		if m == nil {
			continue
		}
		p.Modules = append(p.Modules, m)
		for _, k := range m.Kernels {
			if k == nil || k.Decl {
				continue
			}
			if prev, ok := p.kernels[k.Export]; ok {
				dup(opPos(k.Op), "kernel export", fmt.Sprintf("%q", k.Export), opPos(prev.Op))
				continue
			}
			if prev, ok := kernelSyms[k.Symbol]; ok {
				dup(opPos(k.Op), "kernel", "@"+k.Symbol, opPos(prev.Op))
				continue
			}
			kernelSyms[k.Symbol] = k
			p.kernels[k.Export] = k
			p.kernelOrder = append(p.kernelOrder, k)
		}
		for _, f := range m.Funcs {
			if f == nil {
				continue
			}
			if f.Family != "" && f.Body != nil || isProviderKind(f.Kind) {
				fam := strings.TrimPrefix(f.Family, "@")
				p.families[fam] = append(p.families[fam], f)
			}
			if f.Symbol == "" {
				continue
			}
			prev, ok := p.funcs[f.Symbol]
			switch {
			case !ok:
				p.funcs[f.Symbol] = f
			case prev.Body != nil && f.Body != nil:
				dup(opPos(f.Op), "function", "@"+f.Symbol, opPos(prev.Op))
			case f.Body != nil:
				p.funcs[f.Symbol] = f
			}
		}
		for _, d := range m.ConfigDecls {
			if d != nil {
				if _, ok := p.configDecls[d.Symbol]; !ok {
					p.configDecls[d.Symbol] = d
				}
			}
		}
		for _, d := range m.ConfigDefs {
			if d == nil {
				continue
			}
			if prev, ok := p.configDefs[d.Symbol]; ok {
				if prev.Value.Text != d.Value.Text {
					dup(opPos(d.Op), "config.def", "@"+d.Symbol, opPos(prev.Op))
				}
				continue
			}
			p.configDefs[d.Symbol] = d
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return p, errs
	}
	return p, nil
}

// isProviderKind reports whether an op name introduces a template provider.
func isProviderKind(kind string) bool {
	switch kind {
	case "template.def", "func.template", "func.ukernel":
		return true
	}
	return false
}

func opPos(o *Op) Pos {
	if o == nil {
		return Pos{}
	}
	return o.Pos
}

// Kernel returns the kernel.def exported under the name; the error (class
// ErrNoKernel) names the missing export and the available ones.
func (p *Program) Kernel(export string) (*Kernel, error) {
	if k, ok := p.kernels[export]; ok {
		return k, nil
	}
	names := make([]string, 0, len(p.kernelOrder))
	for _, k := range p.kernelOrder {
		names = append(names, k.Export)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: %q (the program defines no kernels)", ErrNoKernel, export)
	}
	return nil, fmt.Errorf("%w: %q (defined: %s)", ErrNoKernel, export, strings.Join(names, ", "))
}

// Kernels lists the kernel definitions of all modules in source order.
func (p *Program) Kernels() []*Kernel { return p.kernelOrder }

// Func returns the function definition (or, lacking one, the declaration)
// of a symbol, or nil.
func (p *Program) Func(symbol string) *Func { return p.funcs[strings.TrimPrefix(symbol, "@")] }

// Providers lists the visible providers of a template family (template.def<@f>
// or func.template<k>), in source order.
func (p *Program) Providers(family string) []*Func {
	return p.families[strings.TrimPrefix(family, "@")]
}

// ConfigDecl returns the declaration of a config symbol, or nil.
func (p *Program) ConfigDecl(symbol string) *ConfigDecl {
	return p.configDecls[strings.TrimPrefix(symbol, "@")]
}

// ConfigDefaults returns the values of every config.def in the program,
// parsed in the type each was written with; definitions whose literal does
// not fit their type are reported as an error.
func (p *Program) ConfigDefaults() (map[string]Const, error) {
	out := make(map[string]Const, len(p.configDefs))
	var errs ErrorList
	for sym, d := range p.configDefs {
		t := (*Type)(nil)
		if d.Op != nil && len(d.Op.Types) > 0 {
			t = d.Op.Types[0]
		}
		if d.Type != nil {
			t = d.Type
		}
		if t == nil || !t.IsScalar() {
			continue
		}
		c, err := ParseConst(t, d.Value.Text)
		if err != nil {
			errs = append(errs, &Error{Pos: opPos(d.Op), Class: ErrInvalid, Msg: err.Error()})
			continue
		}
		out[sym] = c
	}
	if len(errs) > 0 {
		errs.Sort()
		return out, errs
	}
	return out, nil
}
