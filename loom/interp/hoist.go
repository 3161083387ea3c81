package interp

import (
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Group-invariant hoisting: top-level ops of the kernel body whose one
// uniform result depends only on launch parameters, compile-time constants,
// the launch geometry and other such results (views of parameter buffers,
// index arithmetic on sizes, workgroup counts) compute the same value in
// every workgroup. A frame runs them once per Run (prologue) and each
// workgroup runs the rest (body). They are pure: they write only their own
// result register, which nothing else writes. Should any of them trap in
// the prologue, the frame runs the whole code per workgroup instead, so
// errors, and the workgroup they name, are exactly those of the unhoisted
// kernel.

// hoistNames are the ops that may be hoisted, given uniform operands.
var hoistNames = map[string]bool{
	"buffer.view": true, "kernel.workgroup.count": true, "kernel.workgroup.size": true,
}

// invariantOp reports whether op, just compiled at the top level into one
// instruction, computes a group-invariant value; it records its result as
// invariant for later ops.
func (c *compiler) invariantOp(b *block, op *loom.Op) bool {
	if c.k.batched || len(op.Regions) != 0 || len(op.Results) != 1 {
		return false
	}
	name, ok := op.Name, hoistNames[op.Name]
	if rest, isIndex := strings.CutPrefix(name, "index."); isIndex {
		_, ok = indexNames[rest]
	}
	if !ok {
		return false
	}
	r := b.sc.lookup(op.Results[0].Name)
	if r == nil || !r.uni || r.comps != 1 {
		return false
	}
	inv := func(name string) bool {
		s := b.sc.lookup(name)
		return s != nil && (s.cst || c.inv[s])
	}
	for _, o := range op.Operands {
		if o.Lit == nil && !inv(o.Name) {
			return false
		}
	}
	types := append(append([]*loom.Type{op.Results[0].Type}, op.ResultTypes...), op.Types...)
	for _, t := range types {
		if t == nil {
			continue
		}
		for _, d := range t.Dims {
			if d.Value != nil && !inv(d.Value.Name) {
				return false
			}
		}
	}
	c.inv[r] = true
	return true
}

// splitHoisted divides the top-level code into prologue and body.
func (k *Kernel) splitHoisted(code []instr, hoist []bool) {
	k.pre, k.body = nil, nil
	for i, in := range code {
		if i < len(hoist) && hoist[i] {
			k.pre = append(k.pre, in)
		} else {
			k.body = append(k.body, in)
		}
	}
	if len(k.pre) == 0 {
		k.body = nil
	}
}

// prologue runs the hoisted ops on a frame whose parameters are loaded;
// the frame then runs only the body per workgroup, unless one trapped.
func (k *Kernel) prologue(fr *frame) {
	fr.hoisted = false
	if len(k.pre) == 0 {
		return
	}
	for _, in := range k.pre {
		if in(fr) != nil {
			return
		}
	}
	fr.hoisted = true
}
