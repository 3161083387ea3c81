package loom

import (
	"slices"
	"testing"
)

// TestNoaliasParams checks which launch parameters reach
// buffer.assume.noalias: directly, through another assume op, in a nested
// region, through a call; a parameter only viewed does not.
func TestNoaliasParams(t *testing.T) {
	p := parseProgram(t, `
func.def @helper(%b: buffer) {
  %u = buffer.assume.noalias %b : buffer
  func.return
}
kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %a: buffer, %b: buffer, %c: buffer, %d: buffer, %e: buffer) {
  %an = buffer.assume.noalias %a : buffer
  %bg = buffer.assume.memory_space<global> %b : buffer
  %bn = buffer.assume.noalias %bg : buffer
  %z = index.constant 0 : offset
  %cv = buffer.view %c[%z] : buffer -> view<4xf32>
  %ok = index.cmp ult, %n, %n : index
  scf.if %ok {
    %dn = buffer.assume.noalias %d : buffer
  }
  func.call @helper(%e) : (buffer) -> ()
  kernel.return
}
`)
	k := mustKernel(t, p, "k")
	if got, want := p.NoaliasParams(k), []int{1, 2, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("NoaliasParams = %v, want %v (%%a, %%b, %%d, %%e)", got, want)
	}
}
