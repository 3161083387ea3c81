package loom

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// fingerprintVersion starts every fingerprint; a fingerprint without it
// comes from bindings of an older loomgen.
const fingerprintVersion = "v2"

// FingerprintParts are the facts generated bindings encode, one section
// each, in the order Fingerprint hashes them. A change in any of them makes
// the bindings stale; everything else about the kernel (whitespace,
// comments, value names inside the body, body code that keeps these facts)
// does not.
var FingerprintParts = []string{
	"signature", // export name, workload and launch parameters: names, types, order
	"access",    // the inferred access of each buffer
	"elements",  // the element type of each buffer's views
	"extents",   // the byte-extent formula of each buffer and workgroup-storage use
	"launch",    // the launch-config formulas: workgroups, workgroup size, cluster size, dynamic storage
	"checks",    // the where / assume predicates a Dispatch checks
	"config",    // every config.decl: type, predicates, default
}

// Fingerprint is a stable digest of everything generated bindings depend
// on: "v2" and one 8-hex-digit hash per FingerprintParts section, joined by
// '-'. Comparing two fingerprints section by section (FingerprintDiff) says
// what changed.
func Fingerprint(p *Program, k *Kernel) string {
	texts := FingerprintTexts(p, k)
	parts := make([]string, 0, len(texts)+1)
	parts = append(parts, fingerprintVersion)
	for _, t := range texts {
		sum := sha256.Sum256([]byte(t))
		parts = append(parts, hex.EncodeToString(sum[:4]))
	}
	return strings.Join(parts, "-")
}

// FingerprintDiff names the FingerprintParts sections in which fingerprints
// a and b differ; nil when they are equal. A fingerprint of another format
// (an older loomgen's) differs in "format".
func FingerprintDiff(a, b string) []string {
	if a == b {
		return nil
	}
	pa, pb := strings.Split(a, "-"), strings.Split(b, "-")
	n := len(FingerprintParts) + 1
	if len(pa) != n || len(pb) != n || pa[0] != fingerprintVersion || pb[0] != fingerprintVersion {
		return []string{"format"}
	}
	var out []string
	for i, name := range FingerprintParts {
		if pa[i+1] != pb[i+1] {
			out = append(out, name)
		}
	}
	return out
}

// FingerprintTexts are the canonical texts Fingerprint hashes, one per
// FingerprintParts section. They hold no positions, so moving code does not
// change them.
func FingerprintTexts(p *Program, k *Kernel) []string {
	out := make([]string, len(FingerprintParts))
	if k == nil || p == nil {
		return out
	}
	var b strings.Builder
	next := func(i int) {
		out[i] = b.String()
		b.Reset()
	}
	b.WriteString("export " + k.Export + "\n")
	for _, sig := range []struct {
		label string
		vs    []*Value
	}{{"workload", k.Workload}, {"launch", k.Launch}} {
		b.WriteString(sig.label + "\n")
		for _, v := range sig.vs {
			if v != nil {
				b.WriteString("  %" + v.Name + ": " + typeText(v.Type) + "\n")
			}
		}
	}
	next(0)
	access := p.Access(k)
	for _, a := range access {
		b.WriteString(paramLabel(a.Param, a.Index) + " " + a.Access.String() + "\n")
	}
	next(1)
	for _, a := range access {
		b.WriteString(paramLabel(a.Param, a.Index) + " " + typeText(a.Elem) + "\n")
	}
	next(2)
	for _, e := range p.Extents(k) {
		f := "unknown"
		if e.Bytes != nil {
			f = e.Bytes.String()
		}
		b.WriteString(paramLabel(e.Param, e.Index) + " " + f + "\n")
	}
	for _, u := range p.WorkgroupStorageUses(k) {
		f := "unknown"
		switch {
		case u.Whole:
			f = "all"
		case u.Bytes != nil:
			f = u.Bytes.String()
		}
		views := "unknown"
		if u.Views != nil {
			views = u.Views.String()
		}
		b.WriteString("workgroup storage " + f + " views " + views + "\n")
	}
	next(3)
	if l, err := p.LaunchExprs(k); err != nil {
		// The bindings of such a kernel are refused; the message is not
		// hashed because it carries positions.
		b.WriteString("not evaluable\n")
	} else {
		for _, axes := range []struct {
			label string
			es    [3]*Expr
		}{{"workgroups", l.Workgroups}, {"workgroup_size", l.WorkgroupSize}, {"cluster_size", l.ClusterSize}} {
			b.WriteString(axes.label)
			for _, e := range axes.es {
				b.WriteString(" " + e.String())
			}
			b.WriteString("\n")
		}
		if l.DynamicWorkgroupStorage != nil {
			// Bindings made before the clause pass no storage.
			b.WriteString("dynamic_workgroup_storage " + l.DynamicWorkgroupStorage.String() + "\n")
		}
	}
	next(4)
	for _, c := range p.ArgChecks(k) {
		writeCheck(&b, c)
	}
	next(5)
	b.WriteString(p.configFingerprint())
	next(6)
	return out
}

// configFingerprint is the configs part of every kernel's fingerprint:
// every config.decl of the program with its default, checks and
// predicates. It is the same for every kernel, so it is built once (built
// per kernel, it made fingerprinting a package quadratic in its size).
func (p *Program) configFingerprint() string {
	p.configTextOnce.Do(func() {
		var b strings.Builder
		defaults, _ := p.ConfigDefaults()
		for _, d := range p.configDeclsInOrder() {
			b.WriteString("@" + d.Symbol + ": " + typeText(d.Type))
			if c, ok := defaults[d.Symbol]; ok {
				b.WriteString(" = " + c.String())
			}
			b.WriteString("\n")
			for _, c := range ConfigChecks(d) {
				writeCheck(&b, c)
			}
			// Predicates Validate cannot check still belong to the declaration.
			for _, pr := range d.Preds {
				if pr != nil {
					b.WriteString("  pred " + pr.Name + "/" + strconv.Itoa(len(pr.Args)) + "\n")
				}
			}
		}
		p.configText = b.String()
	})
	return p.configText
}

func writeCheck(b *strings.Builder, c ArgCheck) {
	b.WriteString("  " + c.Pred)
	for _, a := range c.Args {
		b.WriteString(" " + a.String())
	}
	b.WriteString("\n")
}

func typeText(t *Type) string {
	if t == nil {
		return "-"
	}
	return t.String()
}

func paramLabel(v *Value, index int) string {
	if v != nil {
		return "%" + v.Name
	}
	return "#" + strconv.Itoa(index)
}

// configDeclsInOrder is every config.decl of the program, first declaration
// of each symbol, in module and source order.
func (p *Program) configDeclsInOrder() []*ConfigDecl {
	var out []*ConfigDecl
	seen := map[string]bool{}
	for _, m := range p.Modules {
		for _, d := range m.ConfigDecls {
			if d != nil && !seen[d.Symbol] {
				seen[d.Symbol] = true
				out = append(out, d)
			}
		}
	}
	return out
}
