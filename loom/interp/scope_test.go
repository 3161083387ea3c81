package interp

import "testing"

// TestDeeplyNestedLoops runs nestedKernel at depths up to the parser's
// limit: the innermost body reads values defined n scopes up (remembered in
// the scopes between by lookup), and each loop compiles its body twice, its
// carried value turning varying in the first attempt.
func TestDeeplyNestedLoops(t *testing.T) {
	for _, n := range []int{1, 3, 4, 190} {
		checkPlusOne(t, nestedKernel(n), uint32(n))
	}
}

// checkPlusOne runs a oneGroupKernel exported as "nested" that stores
// in[i] + 1 for each of its 64 invocations, and checks that it does.
func checkPlusOne(t *testing.T, src string, seed uint32) {
	t.Helper()
	r := compileRun(t, parseSrc(t, src), "nested", Options{})
	in := ramp(1024, seed, 3)
	out := make([]byte, 4*1024)
	r.run(nil, buf(f32bytes(in)), buf(out))
	want := make([]float32, 1024)
	for i := range 64 {
		want[i] = in[i] + 1
	}
	exactF32(t, "out", bytesF32(out), want)
}
