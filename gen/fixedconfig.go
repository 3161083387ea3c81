package gen

import (
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// FixedConfig is a config.decl whose type has no Go value, an encoding
// (encoding<schema>, encoding<layout>, …): an encoding is a compile-time
// description of how data is stored, not a number a program picks at run
// time, so Config has no field for it. Neither backend folds an encoding
// config value (the CPU executor and PTX compile scalar config.gets only),
// so a kernel that reads one is refused; the package's other kernels and
// config are bound.
type FixedConfig struct {
	Key     string // the symbol without '@'
	Type    *loom.Type
	Default string // the config.def's value as written; "" without one
	Pos     loom.Pos
}

// isEncoding reports whether t is an encoding<…> type.
func isEncoding(t *loom.Type) bool {
	return t != nil && t.Kind == loom.TypeOther && strings.HasPrefix(t.Name, "encoding<")
}

// configDefText is the value of symbol's config.def as written, or "".
func configDefText(prog *loom.Program, symbol string) string {
	for _, mod := range prog.Modules {
		for _, d := range mod.ConfigDefs {
			if d != nil && d.Symbol == symbol {
				return d.Value.Text
			}
		}
	}
	return ""
}

// configReads is the first config.get of each config symbol that kernel k
// can reach: its launch-config region, its body and, transitively, every
// function or template provider they name.
func configReads(prog *loom.Program, k *loom.Kernel) map[string]*loom.Op {
	reads := map[string]*loom.Op{}
	seen := map[string]bool{}
	var walk func(r *loom.Region)
	visit := func(f *loom.Func) {
		if f != nil && !seen[f.Symbol] {
			seen[f.Symbol] = true
			walk(f.Body)
		}
	}
	walk = func(r *loom.Region) {
		if r == nil {
			return
		}
		for _, op := range r.Ops {
			switch {
			case op.Name == "config.get":
				if _, ok := reads[op.Symbol]; !ok {
					reads[op.Symbol] = op
				}
			case op.Symbol != "":
				visit(prog.Func(op.Symbol))
				for _, f := range prog.Providers(op.Symbol) {
					visit(f)
				}
			}
			if fam, ok := strings.CutPrefix(op.Param, "@"); ok {
				for _, f := range prog.Providers(fam) {
					visit(f)
				}
			}
			for _, sub := range op.Regions {
				walk(sub)
			}
		}
	}
	walk(k.Config)
	walk(k.Body)
	return reads
}

// checkFixedReads refuses kernel k when it reads a fixed config.
func (m *Model) checkFixedReads(prog *loom.Program, k *loom.Kernel) error {
	if len(m.Fixed) == 0 {
		return nil
	}
	var errs loom.ErrorList
	reads := configReads(prog, k)
	for _, f := range m.Fixed {
		if op, ok := reads[f.Key]; ok {
			errs.Add(op.Pos, ErrUnsupported, "kernel "+k.Export+": reads config @"+f.Key+" of type "+f.Type.String()+
				"; an encoding config value has no Go Config field and no backend compiles one in (only scalar config values are), so the kernel cannot be bound")
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
