package loom

// memorySpaceCodes are the values of Loom's MemorySpace enum
// (dialect/memory.py), which test.fact_buffer_memory_space and
// test.fact_view_memory_space expose.
var memorySpaceCodes = map[string]int64{
	"unknown": 0, "global": 1, "workgroup": 2, "private": 3,
	"constant": 4, "host": 5, "descriptor": 6, "generic": 7,
}

// memoryPassThrough are ops whose result lies in the memory of their
// first operand.
var memoryPassThrough = map[string]bool{
	"buffer.view": true, "view.subview": true, "view.refine": true,
	"buffer.assume.alignment": true, "buffer.assume.noalias": true,
}

// MemorySpaceFact is the memory-space code of buffer or view v, or -1
// when it is not known: a kernel parameter (kernelParam) is global
// memory, buffer.assume.memory_space and buffer.alloca name theirs (an
// alloca naming none is private scratch, as the shared pass reads it),
// views and assumptions keep their source's; anything else — a function
// parameter, a loaded or selected reference — is unknown.
func MemorySpaceFact(v *Value, kernelParam func(*Value) bool) int64 {
	for v != nil {
		d := v.Def
		switch {
		case d == nil:
			if kernelParam(v) {
				return memorySpaceCodes["global"]
			}
			return -1
		case d.Name == "buffer.assume.memory_space" || d.Name == "buffer.alloca":
			space := namedSpace(d)
			if d.Name == "buffer.alloca" {
				space = AllocaSpace(d)
			}
			if c, ok := memorySpaceCodes[space]; ok {
				return c
			}
			return -1
		case memoryPassThrough[d.Name] && len(d.Operands) > 0:
			v = d.Operands[0].Value
		default:
			return -1
		}
	}
	return -1
}

// namedSpace is the memory space op names, in its <space> parameter or
// its memory_space attribute, or "".
func namedSpace(op *Op) string {
	space := op.Param
	if a := op.Attr("memory_space"); a != nil && space == "" {
		space = a.Value.Text
		if a.Value.Str != "" {
			space = a.Value.Str
		}
	}
	return space
}

// AllocaSpace is the memory space of buffer.alloca op in either spelling
// (`<workgroup>` or `{memory_space = workgroup}`); an alloca naming none
// is private scratch. Values keep pointing at the op as parsed, so
// backends following a view to its alloca read the space through this.
func AllocaSpace(op *Op) string {
	if s := namedSpace(op); s != "" {
		return s
	}
	return "private"
}
