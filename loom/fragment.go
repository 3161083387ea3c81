package loom

import (
	"fmt"
	"strings"
)

// Matrix fragments (vector.fragment.load/store, vector.fragment, vector.mma)
// hold a matrix tile in a physical payload vector. Loom leaves the payload
// layout to the target; loomgen's targets (the CPU executor and PTX) define
// two, chosen from the logical shape and the payload length:
//
//   - dense: the payload has rows×cols components and holds the whole tile
//     in row-major order in every invocation; each invocation works alone.
//   - subgroup, wave 32: the tile is spread over the 32 invocations of a
//     subgroup, in the layout of Loom's RDNA3 WMMA descriptors (row or
//     column is lane mod 16, the reduction packed along the payload;
//     accumulator rows interleaved by lane half): lhs [16, K] and rhs
//     [K, 16] have K components per lane, init/result [16, 16] have 8.
//   - subgroup, wave 64: for kernels whose target is an AMDGPU of the gfx9
//     family (CDNA), the layout of Loom's MFMA descriptors over 64
//     consecutive invocations (FragmentWave): row or column is lane mod 16,
//     the reduction packed by lane group (lane / 16) and then along the
//     payload; accumulator row (lane / 16)·4 + component. lhs [16, K] and
//     rhs [K, 16] have K/4 components per lane, init/result [16, 16] have
//     4. On loomgen's 32-lane subgroups the 64 invocations are two
//     consecutive subgroups.
//
// Both backends agree on this meaning; PTX keeps wave-32 fragments in the
// tensor cores' own register layout while nothing observes their lanes.

// FragmentRole is the role of a matrix fragment: the operand it plays in
// vector.mma.
type FragmentRole uint8

// Fragment roles, in the order of Loom's VectorFragmentRole enum.
const (
	FragmentLHS FragmentRole = iota
	FragmentRHS
	FragmentInit
	FragmentResult
)

var fragmentRoleNames = [...]string{"lhs", "rhs", "init", "result"}

// String is the role's Loom spelling.
func (r FragmentRole) String() string { return fragmentRoleNames[r] }

// ParseFragmentRole reads the <role> parameter of a fragment op.
func ParseFragmentRole(s string) (FragmentRole, bool) {
	for i, n := range fragmentRoleNames {
		if n == s {
			return FragmentRole(i), true
		}
	}
	return 0, false
}

// IsAccumulator reports whether the role is init or result: a [M, N] tile.
func (r FragmentRole) IsAccumulator() bool { return r == FragmentInit || r == FragmentResult }

// FragmentSubgroupSize is the subgroup width the wave-32 layout is
// defined for, FragmentWave64 that of the MFMA (wave-64) layout;
// FragmentTile is their M and N.
const (
	FragmentSubgroupSize = 32
	FragmentWave64       = 64
	FragmentTile         = 16
)

// FragmentWave is the number of invocations kernel k's subgroup fragments
// are spread over: 64 when its target(@T) names an amdgpu.target of the
// gfx9 family (Loom's CDNA MFMA layouts are defined for wave64), else 32.
func FragmentWave(mods []*Module, k *Kernel) int {
	if k == nil || k.Target == "" {
		return FragmentSubgroupSize
	}
	for _, m := range mods {
		for _, op := range m.Ops {
			if op.Name == "amdgpu.target" && op.Symbol == k.Target {
				if strings.HasPrefix(op.Param, "gfx9") {
					return FragmentWave64
				}
				return FragmentSubgroupSize
			}
		}
	}
	return FragmentSubgroupSize
}

// FragmentLayout maps a fragment's payload components to matrix coordinates.
type FragmentLayout struct {
	Role       FragmentRole
	Rows, Cols int // logical shape: lhs [M, K], rhs [K, N], init/result [M, N]
	Payload    int // components per invocation
	// Subgroup is false for the dense layout (whole tile per invocation)
	// and true for the subgroup layouts.
	Subgroup bool
	// Wave is the number of invocations a subgroup layout spans (32 or
	// 64); 1 for the dense layout.
	Wave int
}

// NewFragmentLayout selects the layout of a fragment of the given role,
// logical shape and payload length for fragments spread over wave
// invocations (FragmentWave), or says why none fits.
func NewFragmentLayout(role FragmentRole, rows, cols, payload int64, wave int) (FragmentLayout, error) {
	f := FragmentLayout{Role: role, Rows: int(rows), Cols: int(cols), Payload: int(payload), Wave: 1}
	if rows <= 0 || cols <= 0 || payload <= 0 || rows > 4096 || cols > 4096 {
		return f, fmt.Errorf("fragment shape [%d, %d] with %d payload components", rows, cols, payload)
	}
	if rows*cols == payload {
		return f, nil
	}
	f.Subgroup, f.Wave = true, wave
	// The reduction depth per lane: all of it in wave 32, a quarter (one
	// lane group of four) in wave 64.
	groups := int64(1)
	if wave == FragmentWave64 {
		groups = FragmentWave64 / FragmentTile
	}
	switch {
	case role == FragmentLHS && rows == FragmentTile && payload*groups == cols:
	case role == FragmentRHS && cols == FragmentTile && payload*groups == rows:
	case role.IsAccumulator() && rows == FragmentTile && cols == FragmentTile && payload == int64(FragmentTile*FragmentTile/wave):
	default:
		return f, fmt.Errorf("no fragment layout for %s [%d, %d] in %d components (dense needs %d; the %d-lane subgroup layout needs %s)",
			role, rows, cols, payload, rows*cols, wave, subgroupNeeds(role, wave))
	}
	return f, nil
}

func subgroupNeeds(role FragmentRole, wave int) string {
	per := "K"
	if wave == FragmentWave64 {
		per = "K/4"
	}
	switch role {
	case FragmentLHS:
		return "[16, K] in " + per
	case FragmentRHS:
		return "[K, 16] in " + per
	}
	return fmt.Sprintf("[16, 16] in %d", FragmentTile*FragmentTile/wave)
}

// Coord returns the matrix coordinate (row, col) that payload component e of
// subgroup lane l holds (lane is ignored by the dense layout). Several lanes
// hold copies of the same lhs and rhs elements in the subgroup layout.
func (f FragmentLayout) Coord(lane, e int) (row, col int) {
	if !f.Subgroup {
		return e / f.Cols, e % f.Cols
	}
	// k is the reduction index: wave 64 packs it by lane group first.
	k := e
	if f.Wave == FragmentWave64 {
		k = lane/FragmentTile*f.Payload + e
	}
	switch f.Role {
	case FragmentLHS:
		return lane % FragmentTile, k
	case FragmentRHS:
		return k, lane % FragmentTile
	}
	if f.Wave == FragmentWave64 {
		return lane/FragmentTile*f.Payload + e, lane % FragmentTile
	}
	return 2*e + lane/FragmentTile, lane % FragmentTile
}

// Owner returns the lane and component holding (row, col): the lowest such
// lane when the layout replicates it.
func (f FragmentLayout) Owner(row, col int) (lane, e int) {
	if !f.Subgroup {
		return 0, row*f.Cols + col
	}
	if f.Wave == FragmentWave64 {
		switch f.Role {
		case FragmentLHS:
			return col/f.Payload*FragmentTile + row, col % f.Payload
		case FragmentRHS:
			return row/f.Payload*FragmentTile + col, row % f.Payload
		}
		return row/f.Payload*FragmentTile + col, row % f.Payload
	}
	switch f.Role {
	case FragmentLHS:
		return row, col
	case FragmentRHS:
		return col, row
	}
	return (row%2)*FragmentTile + col, row / 2
}

// MMAShape is the M, N and K of a vector.mma from its operands' payload
// lengths, for fragments spread over wave invocations: the subgroup layout
// when the accumulator has 256/wave components (8 or 4) and lhs and rhs the
// same count (in wave 32 no dense shape has that; in wave 64 the target's
// layout wins over a dense 2×2), else the dense shape M×K, K×N, M×N that
// the three lengths determine.
func MMAShape(lhs, rhs, acc, wave int) (m, n, k int, subgroup bool, err error) {
	if lhs <= 0 || rhs <= 0 || acc <= 0 {
		return 0, 0, 0, false, fmt.Errorf("empty fragment")
	}
	if acc == FragmentTile*FragmentTile/wave && lhs == rhs {
		if wave == FragmentWave64 {
			return FragmentTile, FragmentTile, 4 * lhs, true, nil
		}
		return FragmentTile, FragmentTile, lhs, true, nil
	}
	// M² = (M·K)(M·N)/(K·N).
	num := int64(lhs) * int64(acc)
	if num%int64(rhs) == 0 {
		sq := num / int64(rhs)
		for m = 1; int64(m*m) < sq; m++ {
		}
		if int64(m*m) == sq && lhs%m == 0 && acc%m == 0 {
			k, n = lhs/m, acc/m
			if k*n == rhs {
				return m, n, k, false, nil
			}
		}
	}
	return 0, 0, 0, false, fmt.Errorf("payload lengths %d, %d, %d fit no M×K, K×N, M×N shape", lhs, rhs, acc)
}

// FragmentUnsigned reports whether a fragment loaded through a view of type
// t holds unsigned integers: Loom spells u8 as i8 storage whose encoding's
// #matrix_operand schema says element_format=u8.
func FragmentUnsigned(t *Type) bool {
	if t == nil || t.LayoutValue == nil || t.LayoutValue.Value == nil || t.LayoutValue.Value.Def == nil {
		return false
	}
	d := t.LayoutValue.Value.Def
	if d.Name != "encoding.define" {
		return false
	}
	for _, w := range d.Words {
		if i := strings.Index(w, "element_format="); i >= 0 {
			f := w[i+len("element_format="):]
			return strings.HasPrefix(f, "u")
		}
	}
	return false
}

// DenseStorage reports whether op is an encoding.define of a physical
// storage encoding with a dense row-major layout
// (`#physical_storage<layout=#dense, schema=…>`, as matrix-operand views
// use, or `#physical_storage {layout = %dense, schema = %s}` with %dense a
// dense layout value, as block-quantized byte views use): views with it
// address memory as #dense ones do, and the schema only says how fragment
// loads (FragmentUnsigned) or vector.decode read the elements.
//
// It also holds for the address layouts that are dense row-major:
// encoding.layout.dense, encoding.layout.assume.dense (a fact stating it),
// and encoding.layout.assume.strided of a dense layout (a rank fact).
func DenseStorage(op *Op) bool {
	if op == nil {
		return false
	}
	switch op.Name {
	case "encoding.define":
		if len(op.Words) != 1 {
			return false
		}
		if strings.HasPrefix(op.Words[0], "#physical_storage<layout=#dense,") {
			return true
		}
		// `#physical_storage {layout = %l : encoding<layout>, schema = …}`:
		// dense when %l is.
		if strings.TrimSpace(op.Words[0]) != "#physical_storage" {
			return false
		}
		a := op.Attr("layout")
		if a == nil {
			return false
		}
		for _, o := range op.Operands {
			if "%"+o.Name == a.Value.Text && o.Value != nil && o.Value.Def != op {
				return DenseStorage(o.Value.Def)
			}
		}
		return false
	case "encoding.layout.dense", "encoding.layout.assume.dense":
		return true
	case "encoding.layout.assume.strided":
		return len(op.Operands) == 1 && op.Operands[0].Value != nil && DenseStorage(op.Operands[0].Value.Def)
	}
	return false
}

// DenseLayout reports whether views of type t are dense row-major: no
// layout, #dense, or an encoding value DenseStorage defines.
func DenseLayout(t *Type) bool {
	if t.Layout == "" || t.Layout == "#dense" {
		return true
	}
	lv := t.LayoutValue
	return lv != nil && lv.Value != nil && DenseStorage(lv.Value.Def)
}
