package loom

// Target describes the properties of a compilation target that change how
// host-side values behave: the carrier widths of index and offset values and
// the subgroup size target.subgroup.size reports.
type Target struct {
	Name         string
	IndexBits    int
	OffsetBits   int
	SubgroupSize int
}

// TargetGPU mirrors Loom's AMDGPU profile (index 32 bits, offset 64 bits) with
// NVIDIA's warp size; the CPU executor emulates it so that results agree.
var TargetGPU = Target{Name: "gpu", IndexBits: 32, OffsetBits: 64, SubgroupSize: 32}

// orDefault returns t, or TargetGPU when t is the zero Target, so that a zero
// Env still evaluates with well-defined carriers.
func (t Target) orDefault() Target {
	if t.IndexBits == 0 && t.OffsetBits == 0 && t.SubgroupSize == 0 {
		return TargetGPU
	}
	if t.IndexBits == 0 {
		t.IndexBits = 64
	}
	if t.OffsetBits == 0 {
		t.OffsetBits = 64
	}
	return t
}

// ByteSizeOn is the in-memory size of one element of scalar type ty on
// this target; index and offset take their carrier widths.
func (t Target) ByteSizeOn(ty *Type) int {
	switch ty.Kind {
	case TypeIndex:
		return t.orDefault().IndexBits / 8
	case TypeOffset:
		return t.orDefault().OffsetBits / 8
	}
	return ty.ByteSize()
}
