package gen

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// ErrUnsupported is the class of errors about Loom declarations the bindings
// cannot express: a scalar type the runtime has no argument for, a workload
// parameter whose type disagrees with the launch parameter of the same name,
// a launch-config expression with no Go translation.
var ErrUnsupported = errors.New("loomgen: unsupported declaration")

// Source is one Loom file of the package.
type Source struct {
	// Name is the path relative to the package directory, with slashes; it is
	// the name positions and the runtime's compile errors use.
	Name string
	Path string // as found on disk
	Text []byte
	// Embed says the generated file embeds the source with //go:embed (it
	// lies inside the package directory); otherwise its text is copied in.
	Embed bool
}

// Model is what the generated bindings and the Markdown reference say about
// a package's Loom sources: kernels in source order, config fields in source
// order, all names already converted and made unique.
type Model struct {
	Package string
	Sources []Source
	Kernels []*Kernel
	Config  []*ConfigField
	// Fixed are the config.decls of encoding type, which have no Config
	// field, in source order.
	Fixed   []*FixedConfig
	Program *loom.Program
}

// Kernel is one kernel.def as the bindings present it.
type Kernel struct {
	Export string
	Symbol string
	GoName string
	Pos    loom.Pos
	Doc    string
	// Params are the parameters of Dispatch: the union of the workload and
	// launch signatures in declaration order.
	Params []*Param
	// Launch lists the launch signature in order, as Dispatch packs it.
	Launch   []*Param
	Buffers  []*Buffer
	Geometry *loom.LaunchExprs
	// Storage are the body's kernel.workgroup.storage ops, each checked
	// against the launch's dynamic_workgroup_storage where Dispatch can.
	Storage     []loom.StorageUse
	Checks      []loom.ArgCheck
	Fingerprint string
	// ArgsType names the keyed argument struct of DispatchArgs, "" when
	// no two buffers share a Go type.
	ArgsType string
	Loom     *loom.Kernel
}

// Param is one Dispatch parameter.
type Param struct {
	LoomName string
	GoName   string
	Type     *loom.Type
	Workload int // index in the workload signature, or -1
	Launch   int // index in the launch signature, or -1
	Buffer   *Buffer
}

// Buffer is a buffer or view launch parameter with what the analyses
// established about it.
type Buffer struct {
	Param  *Param
	Access loom.Access
	Basis  loom.Basis
	// Elem is the element type fixed by every view of the buffer, or nil;
	// ElemGo is the Go element type of its Slice, "" when it is a Region.
	Elem   *loom.Type
	ElemGo string
	Extent *loom.Expr // bytes the kernel's views span; nil when unknown
	Reason string     // why Extent is unknown
}

// ConfigField is one config.decl as a field of the Config struct.
type ConfigField struct {
	Key    string // the symbol without '@'
	GoName string
	Type   *loom.Type
	GoType string
	Bind   string // the %name bound in Preds, without '%'
	Preds  []*loom.Pred
	Doc    string
	Pos    loom.Pos
	// Default is the config.def value in the sources, if any.
	Default *loom.Const
	Decl    *loom.ConfigDecl
}

// reservedTopLevel are the package-level names the generated file declares
// besides the kernel types; a kernel named like one is renamed.
var reservedTopLevel = []string{"Config", "Kernels", "Load", "DefaultConfig"}

// BuildModel parses the sources and runs the analyses the bindings need.
// Every problem is reported, positioned, in one error.
func BuildModel(pkg string, sources []Source) (*Model, error) {
	var errs loom.ErrorList
	addErr := func(err error) {
		var le *loom.Error
		var ll loom.ErrorList
		switch {
		case errors.As(err, &ll):
			errs = append(errs, ll...)
		case errors.As(err, &le):
			errs = append(errs, le)
		default:
			errs = append(errs, &loom.Error{Msg: err.Error(), Class: ErrUnsupported})
		}
	}
	// The sources are one package: each file sees the symbols of the
	// others. The files without errors are still analysed, so one run
	// reports the problems of every file.
	files := make([]loom.File, len(sources))
	for i, s := range sources {
		files[i] = loom.File{Name: s.Name, Src: s.Text}
	}
	mods, err := loom.ParsePackage(files...)
	if err != nil {
		addErr(err)
	}
	prog, err := loom.NewProgram(mods...)
	if err != nil {
		addErr(err)
		errs.Sort()
		return nil, errs
	}
	m := &Model{Package: pkg, Sources: sources, Program: prog}
	m.buildConfig(prog, addErr)
	kernelNames := newUniqueNamer(reservedTopLevel...)
	for _, name := range generatedHelpers {
		kernelNames.taken[name] = true
	}
	for _, lk := range prog.Kernels() {
		if err := m.checkFixedReads(prog, lk); err != nil {
			addErr(err)
			continue
		}
		k, err := buildKernel(prog, lk, kernelNames)
		if err != nil {
			addErr(err)
			continue
		}
		m.Kernels = append(m.Kernels, k)
	}
	// Keyed argument types are named after every kernel, so a kernel's
	// own name never yields to one.
	for _, k := range m.Kernels {
		if k.needsKeyedArgs() {
			k.ArgsType = kernelNames.name(k.GoName + "Args")
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return m, nil
}

// needsKeyedArgs reports whether two buffers of k take the same Go type
// (the same Slice element type, or both Region): swapping them would
// type-check, so the bindings add a keyed form (binding mistake 1).
func (k *Kernel) needsKeyedArgs() bool {
	seen := map[string]bool{}
	for _, b := range k.Buffers {
		t := b.ElemGo
		if t == "" {
			t = "Region"
		}
		if seen[t] {
			return true
		}
		seen[t] = true
	}
	return false
}

func opPos(o *loom.Op) loom.Pos {
	if o == nil {
		return loom.Pos{}
	}
	return o.Pos
}

func errAt(pos loom.Pos, class error, format string, args ...any) *loom.Error {
	return &loom.Error{Pos: pos, Class: class, Msg: fmt.Sprintf(format, args...)}
}

func (m *Model) buildConfig(prog *loom.Program, addErr func(error)) {
	defaults, err := prog.ConfigDefaults()
	if err != nil {
		addErr(err)
	}
	names := newUniqueNamer("Validate")
	seen := map[string]bool{}
	for _, mod := range prog.Modules {
		for _, d := range mod.ConfigDecls {
			if d == nil || seen[d.Symbol] {
				continue
			}
			seen[d.Symbol] = true
			goType, ok := configGoType(d.Type)
			if !ok && isEncoding(d.Type) {
				m.Fixed = append(m.Fixed, &FixedConfig{Key: d.Symbol, Type: d.Type, Default: configDefText(prog, d.Symbol), Pos: opPos(d.Op)})
				continue
			}
			if !ok {
				addErr(errAt(opPos(d.Op), ErrUnsupported, "config @%s: type %s has no Go field type (index, offset, i1, i8…i64, f32 and f64 do)", d.Symbol, d.Type))
				continue
			}
			f := &ConfigField{
				Key: d.Symbol, GoName: names.name(exportedName(d.Symbol)), Type: d.Type,
				GoType: goType, Preds: d.Preds, Doc: d.Doc, Pos: opPos(d.Op), Decl: d,
			}
			if d.Bind != nil {
				f.Bind = d.Bind.Name
			}
			if c, ok := defaults[d.Symbol]; ok {
				f.Default = &c
			}
			m.Config = append(m.Config, f)
		}
	}
}

// configGoType is the Go type of a Config field.
func configGoType(t *loom.Type) (string, bool) {
	if t == nil {
		return "", false
	}
	switch t.Kind {
	case loom.TypeIndex:
		return "int", true
	case loom.TypeOffset:
		return "uint64", true
	case loom.TypeInt:
		if t.Bits == 1 {
			return "bool", true
		}
		switch t.Bits {
		case 8, 16, 32, 64:
			return fmt.Sprintf("int%d", t.Bits), true
		}
	case loom.TypeFloat:
		switch t.Name {
		case "f32":
			return "float32", true
		case "f64":
			return "float64", true
		}
	}
	return "", false
}

// scalarGoType is the Go type of a scalar Dispatch parameter and the
// loomrt constructor that packs it.
func scalarGoType(t *loom.Type) (goType, ctor string, ok bool) {
	if t == nil {
		return "", "", false
	}
	switch t.Kind {
	case loom.TypeIndex:
		return "int", "Index", true
	case loom.TypeOffset:
		return "uint64", "Offset", true
	case loom.TypeInt:
		switch t.Bits {
		case 1:
			return "bool", "I1", true
		case 8, 16, 32, 64:
			return fmt.Sprintf("int%d", t.Bits), fmt.Sprintf("I%d", t.Bits), true
		}
	case loom.TypeFloat:
		switch t.Name {
		case "f16":
			return "loomrt.F16", "F16Arg", true
		case "bf16":
			return "loomrt.BF16", "BF16Arg", true
		case "f32":
			return "float32", "F32", true
		case "f64":
			return "float64", "F64", true
		}
	}
	return "", "", false
}

// launchGoType is the Go type of a non-memory launch parameter and the
// loomrt constructor that packs it: a scalar's (scalarGoType), or for a
// vector with a static lane count a Go array of its lanes, [N]T for
// vector<N x T> (row-major over every dimension), packed by loomrt.Vector.
// Without one, ok is false and why, when not "", says what is passed.
func launchGoType(t *loom.Type) (goType, ctor string, ok bool, why string) {
	if t != nil && t.Kind == loom.TypeVector {
		n := int64(1)
		for _, d := range t.Dims {
			if d.Value != nil {
				return "", "", false, "a vector parameter needs a static lane count"
			}
			n *= d.Size
		}
		elem, _, ok := scalarGoType(t.Elem)
		if !ok || n < 1 || n > maxVectorLanes {
			return "", "", false, fmt.Sprintf("vectors of 1 to %d lanes of index, offset, i1, i8…i64, f16, bf16, f32 or f64 are passed", maxVectorLanes)
		}
		return fmt.Sprintf("[%d]%s", n, elem), "Vector", true, ""
	}
	goType, ctor, ok = scalarGoType(t)
	return goType, ctor, ok, ""
}

// maxVectorLanes is the runtime's bound on a vector parameter's lanes.
const maxVectorLanes = 64

// elemGoType is the element type of a Slice for a buffer whose views all
// have element type t; "" means the buffer stays an untyped Region (i1,
// fp8, index and offset elements have no fixed-width Go element).
func elemGoType(t *loom.Type) string {
	if t == nil {
		return ""
	}
	switch t.Kind {
	case loom.TypeInt:
		switch t.Bits {
		case 8, 16, 32, 64:
			return fmt.Sprintf("int%d", t.Bits)
		}
	case loom.TypeFloat:
		switch t.Name {
		case "f16":
			return "loomrt.F16"
		case "bf16":
			return "loomrt.BF16"
		case "f32":
			return "float32"
		case "f64":
			return "float64"
		}
	}
	return ""
}

func isMemoryType(t *loom.Type) bool {
	return t != nil && (t.Kind == loom.TypeBuffer || t.Kind == loom.TypeView)
}

func buildKernel(prog *loom.Program, lk *loom.Kernel, names *uniqueNamer) (*Kernel, error) {
	var errs loom.ErrorList
	k := &Kernel{
		Export: lk.Export, Symbol: lk.Symbol, GoName: names.name(exportedName(lk.Export)),
		Pos: opPos(lk.Op), Doc: lk.Doc, Loom: lk,
	}
	params := newUniqueNamer()
	byName := map[string]*Param{}
	for i, v := range lk.Workload {
		if isMemoryType(v.Type) {
			errs.Add(v.Pos, ErrUnsupported, fmt.Sprintf("kernel %s: workload parameter %%%s is a %s; buffers belong in the launch signature", lk.Export, v.Name, v.Type))
			continue
		}
		if _, _, ok := scalarGoType(v.Type); !ok {
			errs.Add(v.Pos, ErrUnsupported, fmt.Sprintf("kernel %s: workload parameter %%%s has type %s, which has no Go parameter type", lk.Export, v.Name, v.Type))
			continue
		}
		p := &Param{LoomName: v.Name, GoName: params.name(paramName(v.Name)), Type: v.Type, Workload: i, Launch: -1}
		byName[v.Name] = p
		k.Params = append(k.Params, p)
	}
	for i, v := range lk.Launch {
		if p, ok := byName[v.Name]; ok {
			if p.Type.String() != v.Type.String() {
				errs.Add(v.Pos, ErrUnsupported, fmt.Sprintf("kernel %s: %%%s is %s in the workload signature but %s in the launch signature", lk.Export, v.Name, p.Type, v.Type))
				continue
			}
			p.Launch = i
			k.Launch = append(k.Launch, p)
			continue
		}
		if !isMemoryType(v.Type) {
			if _, _, ok, why := launchGoType(v.Type); !ok {
				if why != "" {
					why = " (" + why + ")"
				}
				errs.Add(v.Pos, ErrUnsupported, fmt.Sprintf("kernel %s: launch parameter %%%s has type %s, which the runtime cannot pass%s", lk.Export, v.Name, v.Type, why))
				continue
			}
		}
		p := &Param{LoomName: v.Name, GoName: params.name(paramName(v.Name)), Type: v.Type, Workload: -1, Launch: i}
		byName[v.Name] = p
		k.Params = append(k.Params, p)
		k.Launch = append(k.Launch, p)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	access := prog.Access(lk)
	extents := prog.Extents(lk)
	for _, a := range access {
		if a.Index < 0 || a.Index >= len(k.Launch) {
			continue
		}
		p := k.Launch[a.Index]
		b := &Buffer{Param: p, Access: a.Access, Basis: a.Basis, Elem: a.Elem, ElemGo: elemGoType(a.Elem)}
		for _, e := range extents {
			if e.Index == a.Index {
				b.Extent, b.Reason = e.Bytes, e.Reason
			}
		}
		p.Buffer = b
		k.Buffers = append(k.Buffers, b)
	}
	for _, p := range k.Launch {
		if isMemoryType(p.Type) && p.Buffer == nil {
			// The access analysis covers every memory parameter; a gap would
			// let a buffer be bound with no access, so it is an error here.
			errs.Add(lk.Op.Pos, ErrUnsupported, fmt.Sprintf("kernel %s: no access was inferred for %%%s", lk.Export, p.LoomName))
		}
	}
	geo, err := prog.LaunchExprs(lk)
	if err != nil {
		return nil, err
	}
	k.Geometry = geo
	for i, e := range geo.ClusterSize {
		// The runtime's Dispatch has no cluster size: binding a clustered
		// kernel would launch it unclustered, so generation refuses it.
		if !e.IsConst() || e.Const.Int != 1 {
			errs.Add(geo.Pos, ErrUnsupported, fmt.Sprintf("kernel %s: cluster_size along %c is %s; the runtime launches workgroups without clusters, so only cluster_size(1, 1, 1) can be bound",
				lk.Export, "xyz"[i], prettyExpr(e, k, nil)))
		}
	}
	k.Checks = prog.ArgChecks(lk)
	k.Storage = prog.WorkgroupStorageUses(lk)
	k.Fingerprint = loom.Fingerprint(prog, lk)
	if len(errs) > 0 {
		return nil, errs
	}
	return k, nil
}

// paramForWorkload and paramForLaunch map expression leaves to parameters.
func (k *Kernel) paramForWorkload(i int) *Param {
	for _, p := range k.Params {
		if p.Workload == i {
			return p
		}
	}
	return nil
}

func (k *Kernel) paramForLaunch(i int) *Param {
	if i >= 0 && i < len(k.Launch) {
		return k.Launch[i]
	}
	return nil
}

// sortedKeys returns the keys of a string-keyed map in order, for the few
// places that must iterate one deterministically.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// docLines splits a Loom doc comment for re-emission as Go comment lines.
func docLines(doc string) []string {
	doc = strings.TrimRight(doc, "\n ")
	if doc == "" {
		return nil
	}
	return strings.Split(doc, "\n")
}
