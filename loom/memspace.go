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
			space := d.Param
			if a := d.Attr("memory_space"); a != nil && space == "" {
				space = a.Value.Text
				if a.Value.Str != "" {
					space = a.Value.Str
				}
			}
			if space == "" && d.Name == "buffer.alloca" {
				space = "private"
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
