package runtime

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Source is one .loom file of a kernel package. Name appears in error
// positions (for example "kernels/mlp.loom").
type Source struct {
	Name string
	Text []byte
}

// ConfigValue sets one config symbol: Key without '@', Value in Loom
// spelling ("256", "true", "1.5").
type ConfigValue struct {
	Key   string
	Value string
}

// KernelSpec asks for one kernel of a package.
type KernelSpec struct {
	// Sources are every .loom file of the package: funcs and templates of
	// any file are visible to every kernel.
	Sources []Source
	Export  string
	Config  []ConfigValue
	// Fingerprint is the loom.Fingerprint the bindings were generated
	// for; a different compiled fingerprint is ErrStaleBinding. "" skips
	// the check.
	Fingerprint string
}

// cacheKey identifies a compiled kernel: a hash over every source (name and
// text), the export name, the sorted config and the backend and its target.
// Anything less would let two different kernels share a cache entry (binding
// mistake 18).
type cacheKey [sha256.Size]byte

func (s *Session) keyOf(spec *KernelSpec) cacheKey {
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	t := s.be.target()
	field([]byte(s.be.name()))
	field(fmt.Appendf(nil, "%s/%d/%d/%d", t.Name, t.IndexBits, t.OffsetBits, t.SubgroupSize))
	field([]byte(spec.Export))
	cfg := slices.Clone(spec.Config)
	slices.SortStableFunc(cfg, func(a, b ConfigValue) int { return strings.Compare(a.Key, b.Key) })
	field(fmt.Appendf(nil, "%d", len(cfg)))
	for _, c := range cfg {
		field([]byte(c.Key))
		field([]byte(c.Value))
	}
	field(fmt.Appendf(nil, "%d", len(spec.Sources)))
	for _, src := range spec.Sources {
		field([]byte(src.Name))
		field(src.Text)
	}
	var k cacheKey
	h.Sum(k[:0])
	return k
}

// sourcesKey identifies a set of sources, so a batch parses and analyses
// each package once however many kernels it asks for.
func sourcesKey(srcs []Source) [sha256.Size]byte {
	h := sha256.New()
	for _, src := range srcs {
		fmt.Fprintf(h, "%d:%s;%d:", len(src.Name), src.Name, len(src.Text))
		h.Write(src.Text)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// Compile compiles a batch of kernels and returns their handles in request
// order. Each kernel is compiled once per session: a later request with the
// same sources, export, config and target returns the cached handle. The
// batch fails as a whole on the first error, which names the kernel; a
// compile error leaves the session usable.
func (s *Session) Compile(specs []KernelSpec) ([]Kernel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, err
	}
	out := make([]Kernel, len(specs))
	progs := map[[sha256.Size]byte]*parsed{}
	for i := range specs {
		spec := &specs[i]
		key := s.keyOf(spec)
		if id, ok := s.cache[key]; ok {
			if err := checkFingerprint(spec, &s.kernels[id].info); err != nil {
				return nil, err
			}
			out[i] = Kernel{sess: s.id, id: id}
			continue
		}
		sk := sourcesKey(spec.Sources)
		p := progs[sk]
		if p == nil {
			var err error
			if p, err = parseSources(spec.Sources); err != nil {
				return nil, fmt.Errorf("%w: kernel %s: %w", ErrCompile, spec.Export, err)
			}
			progs[sk] = p
		}
		ck, err := s.compileOne(p, spec)
		if err != nil {
			return nil, err
		}
		if len(s.kernels) >= 1<<31-1 {
			return nil, fmt.Errorf("%w: too many kernels", ErrCompile)
		}
		id := int32(len(s.kernels))
		s.kernels = append(s.kernels, ck)
		s.cache[key] = id
		out[i] = Kernel{sess: s.id, id: id}
	}
	return out, nil
}

// parsed is one package's parsed and analysed sources.
type parsed struct {
	mods []*loom.Module
	prog *loom.Program
}

func parseSources(srcs []Source) (*parsed, error) {
	if len(srcs) == 0 {
		return nil, errors.New("no sources")
	}
	files := make([]loom.File, len(srcs))
	for i, src := range srcs {
		files[i] = loom.File{Name: src.Name, Src: src.Text}
	}
	mods, err := loom.ParsePackage(files...)
	if err != nil {
		return nil, err
	}
	prog, err := loom.NewProgram(mods...)
	if err != nil {
		return nil, err
	}
	return &parsed{mods: mods, prog: prog}, nil
}

func (s *Session) compileOne(p *parsed, spec *KernelSpec) (*compiledKernel, error) {
	fail := func(err error) (*compiledKernel, error) {
		return nil, fmt.Errorf("%w: kernel %s: %w", ErrCompile, spec.Export, err)
	}
	k, err := p.prog.Kernel(spec.Export)
	if err != nil {
		return fail(err)
	}
	if k.Decl {
		return fail(fmt.Errorf("%s: %s is a kernel.decl without a body", k.Op.Pos, spec.Export))
	}
	cfg, err := configValues(p.prog, spec.Config)
	if err != nil {
		return fail(err)
	}
	if err := checkConfig(p.prog, cfg); err != nil {
		return fail(err)
	}
	t := s.be.target()
	access := p.prog.Access(k)
	ck := &compiledKernel{
		prog: p.prog, kern: k, config: cfg, target: t,
		info: KernelInfo{
			Export:      spec.Export,
			Fingerprint: loom.Fingerprint(p.prog, k),
			Target:      t.Name,
		},
	}
	byIndex := map[int]loom.ParamAccess{}
	for _, a := range access {
		byIndex[a.Index] = a
	}
	for i, v := range k.Launch {
		if v.Type == nil {
			return fail(fmt.Errorf("%s: launch parameter %%%s has no type", v.Pos, v.Name))
		}
		var vp vectorParam
		kind, size, err := argVector, 0, error(nil)
		if v.Type.Kind == loom.TypeVector {
			vp, err = vectorKind(v.Type, t)
			size = vp.n * vp.carry
		} else {
			kind, size, err = scalarKind(v.Type, t)
		}
		if err != nil {
			return fail(fmt.Errorf("%s: parameter %%%s: %w", v.Pos, v.Name, err))
		}
		pi := ParamInfo{Name: v.Name, Type: v.Type.String(), Buffer: kind == argBuffer, Bytes: size, Lanes: vp.n, Align: 1}
		if kind == argBuffer {
			pi.Access = byIndex[i].Access
			pi.Align = byIndex[i].Alignment()
		}
		ck.kinds = append(ck.kinds, kind)
		ck.vectors = append(ck.vectors, vp)
		ck.info.Params = append(ck.info.Params, pi)
	}
	if err := checkFingerprint(spec, &ck.info); err != nil {
		return nil, err
	}
	if wg, ok, err := staticWorkgroupSize(p.prog, k, cfg, t); err != nil {
		return fail(err)
	} else if ok {
		ck.info.WorkgroupSize, ck.info.Static = wg, true
	}
	dev, err := s.be.loadKernel(&kernelRequest{
		Modules: p.mods, Program: p.prog, Kernel: k, Export: spec.Export,
		Config: cfg, Target: t, Workers: s.opts.Workers,
	})
	if err != nil {
		return fail(err)
	}
	ck.dev = dev
	ck.launchExprs, ck.launchErr = p.prog.LaunchExprs(k)
	if le := ck.launchExprs; le != nil && le.DynamicWorkgroupStorage != nil {
		ck.maxStorage = s.be.maxWorkgroupStorage(dev)
		ck.info.DynamicWorkgroupStorage, ck.info.MaxWorkgroupStorage = true, ck.maxStorage
	}
	ck.checks, ck.extents, ck.storage = p.prog.ArgChecks(k), p.prog.Extents(k), p.prog.WorkgroupStorageUses(k)
	ck.noalias = p.prog.NoaliasParams(k)
	return ck, nil
}

// checkFingerprint compares the generated fingerprint with the compiled one
// (binding mistake 19), naming the facts that changed and describing the
// current signature so the message says what the bindings must now match.
func checkFingerprint(spec *KernelSpec, info *KernelInfo) error {
	if spec.Fingerprint == "" || spec.Fingerprint == info.Fingerprint {
		return nil
	}
	var sig []string
	for _, p := range info.Params {
		s := "%" + p.Name + ": " + p.Type
		if p.Buffer {
			s += " (" + p.Access.String() + ")"
		}
		sig = append(sig, s)
	}
	changed := loom.FingerprintDiff(spec.Fingerprint, info.Fingerprint)
	what := "changed: " + strings.Join(changed, ", ")
	if len(changed) == 1 && changed[0] == "format" {
		what = "the bindings come from a loomgen with another fingerprint format"
	}
	return fmt.Errorf("%w: kernel %s: %s (bindings generated for fingerprint %s, the source now has %s; launch(%s)); run go generate",
		ErrStaleBinding, spec.Export, what, spec.Fingerprint, info.Fingerprint, strings.Join(sig, ", "))
}

// configValues parses the requested config values in their declared types.
// Defaults from config.def apply to symbols not set.
func configValues(prog *loom.Program, vals []ConfigValue) (map[string]loom.Const, error) {
	cfg, err := prog.ConfigDefaults()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, v := range vals {
		key := strings.TrimPrefix(v.Key, "@")
		if seen[key] {
			return nil, fmt.Errorf("config %s set twice", key)
		}
		seen[key] = true
		d := prog.ConfigDecl(key)
		if d == nil || d.Type == nil {
			return nil, fmt.Errorf("unknown config key %q (no config.decl @%s)", key, key)
		}
		c, err := loom.ParseConst(d.Type, v.Value)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", key, err)
		}
		cfg[key] = c
	}
	return cfg, nil
}

// checkConfig evaluates the predicates of every config.decl that has a
// value (set or defaulted) against cfg, as the generated Validate does, so
// a caller that does not go through Validate is held to them too (binding
// mistake 12). A refusal wraps ErrArgument.
func checkConfig(prog *loom.Program, cfg map[string]loom.Const) error {
	env := &loom.Env{Config: cfg}
	for _, m := range prog.Modules {
		for _, d := range m.ConfigDecls {
			v, ok := cfg[d.Symbol]
			if !ok {
				continue
			}
			for _, c := range loom.ConfigChecks(d) {
				holds, err := c.Eval(env)
				if err != nil {
					return fmt.Errorf("%w: config @%s = %s: %s at %s cannot be checked: %w", ErrArgument, d.Symbol, v, c.Text, c.Pos, err)
				}
				if !holds {
					return fmt.Errorf("%w: config @%s = %s violates %s at %s", ErrArgument, d.Symbol, v, c.Text, c.Pos)
				}
			}
		}
	}
	return nil
}

// staticWorkgroupSize evaluates the workgroup size when it depends on no
// workload argument (config values and target properties are known at
// compile time).
func staticWorkgroupSize(prog *loom.Program, k *loom.Kernel, cfg map[string]loom.Const, t loom.Target) ([3]int, bool, error) {
	var out [3]int
	le, err := prog.LaunchExprs(k)
	if err != nil {
		return out, false, err
	}
	env := &loom.Env{Config: cfg, Target: t}
	for i, e := range le.WorkgroupSize {
		if d := e.Deps(); len(d.Workload) > 0 || len(d.Launch) > 0 {
			return out, false, nil
		}
		c, err := e.Eval(env)
		if err != nil {
			return out, false, err
		}
		out[i] = int(c.Int)
	}
	return out, true, nil
}

// LaunchConfig evaluates k's launch-config region for the given workload
// arguments (in workload-signature order) with the kernel's compiled config.
func (s *Session) LaunchConfig(k Kernel, workload []loom.Const) (loom.Geometry, error) {
	var g loom.Geometry
	err := s.evalLaunch(k, workload, func(ck *compiledKernel, env *loom.Env) (err error) {
		g, err = ck.prog.LaunchConfig(ck.kern, env)
		return err
	})
	return g, err
}

// LaunchStorage evaluates the dynamic_workgroup_storage clause of k's
// launch config (Dispatch.WorkgroupStorage) for the given workload
// arguments; 0 for a kernel without one.
func (s *Session) LaunchStorage(k Kernel, workload []loom.Const) (int, error) {
	var n int64
	err := s.evalLaunch(k, workload, func(ck *compiledKernel, env *loom.Env) (err error) {
		n, err = ck.prog.LaunchStorage(ck.kern, env)
		return err
	})
	return int(n), err
}

// evalLaunch runs eval on k's compiled kernel with the workload's
// environment, wording its errors.
func (s *Session) evalLaunch(k Kernel, workload []loom.Const, eval func(*compiledKernel, *loom.Env) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	ck, err := s.kernel(k)
	if err != nil {
		return err
	}
	if len(workload) != len(ck.kern.Workload) {
		return fmt.Errorf("%w: kernel %s: %d workload arguments, its workload signature has %d", ErrArgument, ck.info.Export, len(workload), len(ck.kern.Workload))
	}
	if err := eval(ck, &loom.Env{Workload: workload, Config: ck.config, Target: ck.target}); err != nil {
		return fmt.Errorf("%w: kernel %s: %w", ErrArgument, ck.info.Export, err)
	}
	return nil
}
