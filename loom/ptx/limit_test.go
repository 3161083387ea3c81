package ptx

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestCompiledOpsCap: a kernel whose inlining doubles at every level is
// refused past loom.MaxCompiledOps, positioned and naming the inline
// chain, and the same functions inlined twelve levels deep still compile.
func TestCompiledOpsCap(t *testing.T) {
	m := parse(t, "../testdata/refused/inline_doubling.loom")
	if _, err := Compile([]*loom.Module{m}, "doubling_small", Options{}); err != nil {
		t.Fatalf("doubling_small: %v", err)
	}
	_, err := Compile([]*loom.Module{m}, "doubling", Options{})
	if err == nil || !errors.Is(err, ErrUnsupported) ||
		!strings.Contains(err.Error(), "inline_doubling.loom:") ||
		!strings.Contains(err.Error(), "compiles to more than 1048576 operations") ||
		!strings.Contains(err.Error(), "inlining @f19 → @f18 → @f17 → … → ") {
		t.Fatalf("doubling: got %v, want a positioned refusal past 1048576 operations naming the inline chain", err)
	}
}

// unrolledFour nests four loops, each unrolled 64 trips: 16.7 million
// copies of the innermost body.
const unrolledFour = `kernel.def export("unrolled") @unrolled() {
  %one = index.constant 1 : index
  %wg = index.constant 64 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%wg, %one, %one) : index
} launch(%src: buffer, %dst: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  %zero = index.constant 0 : offset
  %len = index.constant 1024 : index
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c64 = index.constant 64 : index
  %in = buffer.view %src[%zero] : buffer -> view<[%len]xf32>
  %out = buffer.view %dst[%zero] : buffer -> view<[%len]xf32>
  %x = view.load %in[%i] : view<[%len]xf32> -> f32
  %r0 = scf.for %k0 = [%c0 to %c64 step %c1] (%a0 = %x : f32) -> (f32) unroll(64) {
    %r1 = scf.for %k1 = [%c0 to %c64 step %c1] (%a1 = %a0 : f32) -> (f32) unroll(64) {
      %r2 = scf.for %k2 = [%c0 to %c64 step %c1] (%a2 = %a1 : f32) -> (f32) unroll(64) {
        %r3 = scf.for %k3 = [%c0 to %c64 step %c1] (%a3 = %a2 : f32) -> (f32) unroll(64) {
          %y = scalar.addf %a3, %x : f32
          scf.yield %y : f32
        }
        scf.yield %r3 : f32
      }
      scf.yield %r2 : f32
    }
    scf.yield %r1 : f32
  }
  view.store %r0, %out[%i] : f32, view<[%len]xf32>
  kernel.return
}
`

// TestCompiledOpsCapUnrolled: unrolling counts against the cap too, and
// the refusal names no call where none is being inlined.
func TestCompiledOpsCapUnrolled(t *testing.T) {
	m, err := loom.ParseFile("unrolled.loom", []byte(unrolledFour))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile([]*loom.Module{m}, "unrolled", Options{})
	if err == nil || !errors.Is(err, ErrUnsupported) ||
		!strings.Contains(err.Error(), "unrolled.loom:19:11: ptx: unsupported: scalar.addf: the kernel compiles to more than 1048576 operations (each inlined call's body and each unrolled loop trip count every time): too large") {
		t.Fatalf("got %v, want a positioned refusal past 1048576 operations", err)
	}
}
