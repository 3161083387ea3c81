package ptx

import (
	"regexp"

	"github.com/loomgen/loomgen/loom"
)

// Kernel versioning on the buffers' run-time alignment.
//
// A buffer parameter is 16-byte aligned only under a predicate tested at
// entry (alignBufferParam), and every vector access under it carries its
// scalar fallback, predicated off when aligned (vecMemory), and every
// async copy its branch to 4-byte chunks (async.go). The fallbacks still
// issue (ptxas predicates the copies' branches too): a q4_K mat-vec step
// issued 16 of them besides its four 16-byte loads, a tensor-core matmul
// trip 128 4-byte cp.async besides its 32 16-byte ones, and they hold
// registers. So when the body has such
// guarded accesses, it is emitted twice: first as before (the fallback
// version), then, taken when every buffer is aligned, with the buffers
// known 16-byte aligned, so no access tests or falls back. The entry
// branches once, uniformly, on the conjunction. Both versions walk the
// same ops in the same order, so the second reuses the first's workgroup
// and private allocations (allocaReplay) instead of declaring its own.
//
// The aligned version is also kept alone (Kernel.AlignedPTX): a host that
// knows the buffers' addresses at dispatch launches it where they are all
// aligned. Its registers are its own, where the versioned kernel's are
// those of its heavier version: the byte-wise fallback of an unrolled sweep
// took the suite's softmax to 64 registers, its aligned version alone 34.

// allocaDecl is one buffer.alloca's array, recorded for the second version.
type allocaDecl struct {
	space, name string
	align       int64
}

// bodyVersions emits the kernel body, versioned on the alignment
// predicates of bufs (the buffer parameters that have one; idx are their
// launch parameter indices) when the body's accesses use them.
func (e *emitter) bodyVersions(body *loom.Region, bufs []*val, idx []int) error {
	mark := e.body.Len()
	e.allocas, e.allocaReplay = nil, nil
	e.versionOn = map[string]bool{}
	if err := e.region(body); err != nil {
		return err
	}
	e.ins("ret")
	text := e.body.String()
	slow := text[mark:]
	var preds []string
	var tested []int
	for i, b := range bufs {
		if guardsAccess(slow, b.alignPred) || e.versionOn[b.alignPred] {
			preds = append(preds, b.alignPred)
			tested = append(tested, idx[i])
		}
	}
	if len(preds) == 0 {
		return nil
	}
	e.body.Reset()
	e.body.WriteString(text[:mark])
	all := preds[0]
	for _, p := range preds[1:] {
		q := e.newReg(cPred)
		e.ins("and.pred %s, %s, %s", q, all, p)
		all = q
	}
	misaligned := e.newLabel("misaligned")
	e.ins("@!%s bra %s", all, misaligned)
	start := e.body.Len()
	saved := make([]val, len(bufs))
	for i, b := range bufs {
		saved[i] = *b
		b.alignPred, b.nat = "", max(b.nat, maxAlign)
	}
	providers := len(e.providers)
	e.allocaReplay = append([]allocaDecl{}, e.allocas...)
	err := e.region(body)
	e.allocaReplay = nil
	e.providers = e.providers[:providers]
	for i, b := range bufs {
		*b = saved[i]
	}
	if err != nil {
		// Whatever the aligned version refuses, the kernel as it was
		// compiled: keep that.
		e.body.Reset()
		e.body.WriteString(text)
		return nil
	}
	e.ins("ret")
	e.alignedBody = text[:mark] + e.body.String()[start:]
	e.alignedParams = tested
	e.label(misaligned)
	e.body.WriteString(slow)
	return nil
}

// noteGuard records, for an element access through v that tests its
// address (needsGuard), the entry predicate under which v's base is 16-byte
// aligned, when that would prove the access aligned: a buffer viewed with
// elements of several sizes (a quantized block's i8, i16 and f16 views)
// has no alignment Dispatch enforces above one byte, so without the
// aligned version each of its loads would carry an address test and a
// byte-wise fallback.
func (e *emitter) noteGuard(v *val) {
	if v.alignPred != "" && e.versionOn != nil && min(v.align, maxAlign) >= int64(carrierBytes(v.elem)) {
		e.versionOn[v.alignPred] = true
	}
}

// guardsAccess reports whether text has a load or store guarded by the
// predicate register reg or its negation (a vector access and its
// fallback), or an async copy branching on it to its fallback chunks.
func guardsAccess(text, reg string) bool {
	r := regexp.QuoteMeta(reg)
	return regexp.MustCompile(`@!?` + r + ` (ld|st)\.|@!` + r + ` bra \$L_async_bytes_`).MatchString(text)
}
