package loom

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Fingerprint is a stable hash (32 hex digits) of what generated bindings
// depend on: the export name, both signatures (parameter names, type
// spellings, order), the access mode of each storage parameter and whether
// the launch config has a dynamic_workgroup_storage clause. It does
// not change with whitespace, comments or body edits that keep the accesses.
func Fingerprint(k *Kernel, access []ParamAccess) string {
	sum := sha256.Sum256([]byte(FingerprintText(k, access)))
	return hex.EncodeToString(sum[:16])
}

// FingerprintText is the canonical text Fingerprint hashes, for messages
// that explain what changed.
func FingerprintText(k *Kernel, access []ParamAccess) string {
	var b strings.Builder
	b.WriteString("loom-fingerprint-v1\n")
	if k == nil {
		return b.String()
	}
	b.WriteString("export " + k.Export + "\n")
	sig := func(label string, vs []*Value) {
		b.WriteString(label + "\n")
		for _, v := range vs {
			if v == nil {
				continue
			}
			b.WriteString("  %" + v.Name + ": " + v.Type.String() + "\n")
		}
	}
	sig("workload", k.Workload)
	sig("launch", k.Launch)
	if k.Config != nil {
		for _, op := range k.Config.Ops {
			if op.Name == "kernel.launch.config" && op.Attr("dynamic_workgroup_storage") != nil {
				// Bindings made before the clause pass no storage.
				b.WriteString("dynamic_workgroup_storage\n")
			}
		}
	}
	b.WriteString("access\n")
	for _, a := range access {
		name := ""
		if a.Param != nil {
			name = a.Param.Name
		}
		b.WriteString("  %" + name + " " + a.Access.String() + "\n")
	}
	return b.String()
}
