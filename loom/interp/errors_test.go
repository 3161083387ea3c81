package interp

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// inlineKernel wraps a body in a kernel "k" with the given launch list.
func inlineKernel(params, body string) string {
	return `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(` + params + `) {
` + body + `
  kernel.return
}
`
}

func compileInline(t testing.TB, params, body string) (*Kernel, error) {
	t.Helper()
	m := parseSrc(t, inlineKernel(params, body))
	return Compile([]*loom.Module{m}, "k", Options{Workers: 2})
}

func runInline(t testing.TB, params, body string, l Launch, args ...Arg) error {
	t.Helper()
	k, err := compileInline(t, params, body)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return k.Run(l, args)
}

func grid(groups, size int) Launch {
	return Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{size, 1, 1}}
}

const prelude = `  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %v = buffer.view %b[%z] : buffer -> view<[%n]xi32>
`

func TestRunErrors(t *testing.T) {
	cases := []struct {
		name, params, body string
		l                  Launch
		args               []Arg
		class              error
		want               []string // substrings of the message
	}{
		{"load past view", "%n: index, %b: buffer", prelude + `  %x = view.load %v[%i] : view<[%n]xi32> -> i32`,
			grid(2, 8), []Arg{idx(10), buf(make([]byte, 64))}, ErrOutOfBounds,
			[]string{"kernel k", "inline.loom:9:", "view.load", "index [10] out of bounds: axis 0 has size 10", "workgroup (1,0,0)", "workitem (2,0,0)"}},
		{"load past buffer", "%n: index, %b: buffer", prelude + `  %x = view.load %v[%i] : view<[%n]xi32> -> i32`,
			grid(1, 8), []Arg{idx(8), buf(make([]byte, 20))}, ErrOutOfBounds,
			[]string{"addresses bytes [20, 24) of %b, outside its 20 bound bytes", "workitem (5,0,0)"}},
		{"store", "%n: index, %b: buffer", prelude + `  %one = scalar.constant 1 : i32
  view.store %one, %v[%i] : i32, view<[%n]xi32>`,
			grid(1, 8), []Arg{idx(4), buf(make([]byte, 64))}, ErrOutOfBounds, []string{"view.store", "index [4]"}},
		{"atomic rmw", "%n: index, %b: buffer", prelude + `  %one = scalar.constant 1 : i32
  %o = view.atomic.rmw<addi> %one, %v[%i] {ordering = relaxed, scope = device} : i32, view<[%n]xi32> -> i32`,
			grid(1, 8), []Arg{idx(4), buf(make([]byte, 64))}, ErrOutOfBounds, []string{"view.atomic.rmw", "index [4]"}},
		{"atomic reduce", "%n: index, %b: buffer", prelude + `  %one = scalar.constant 1 : i32
  view.atomic.reduce<addi> %one, %v[%i] {ordering = relaxed, scope = device} : i32, view<[%n]xi32>`,
			grid(1, 8), []Arg{idx(4), buf(make([]byte, 64))}, ErrOutOfBounds, []string{"view.atomic.reduce"}},
		{"atomic cmpxchg", "%n: index, %b: buffer", prelude + `  %one = scalar.constant 1 : i32
  %o = view.atomic.cmpxchg %one, %one, %v[%i] {success_ordering = acq_rel, failure_ordering = relaxed, scope = device} : i32, view<[%n]xi32> -> i32`,
			grid(1, 8), []Arg{idx(4), buf(make([]byte, 64))}, ErrOutOfBounds, []string{"view.atomic.cmpxchg"}},
		{"atomic load", "%n: index, %b: buffer", prelude + `  %o = view.atomic.load %v[%i] {ordering = acquire, scope = device} : view<[%n]xi32> -> i32`,
			grid(1, 8), []Arg{idx(4), buf(make([]byte, 64))}, ErrOutOfBounds, []string{"view.atomic.load"}},
		{"vector load", "%n: index, %b: buffer", prelude + `  %w = vector.load %v[%i] : view<[%n]xi32> -> vector<4xi32>`,
			grid(1, 2), []Arg{idx(4), buf(make([]byte, 64))}, ErrOutOfBounds, []string{"vector.load", "index [4]", "workitem (1,0,0)"}},
		{"vector store", "%n: index, %b: buffer", prelude + `  %w = vector.constant 3 : vector<4xi32>
  vector.store %w, %v[%i] : vector<4xi32>, view<[%n]xi32>`,
			grid(1, 2), []Arg{idx(4), buf(make([]byte, 64))}, ErrOutOfBounds, []string{"vector.store"}},
		{"divergent barrier", "%n: index, %b: buffer", prelude + `  %lt = index.cmp ult, %i, %n : index
  scf.if %lt {
    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  }`, grid(1, 8), []Arg{idx(3), buf(nil)}, ErrDivergentBarrier, []string{"barrier reached by 3 of 8 work-items"}},
		{"divergent workgroup reduce", "%n: index, %b: buffer", prelude + `  %lt = index.cmp ult, %i, %n : index
  scf.if %lt {
    %one = scalar.constant 1 : i32
    %s = kernel.workgroup.reduce<addi> %one : i32
  }`, grid(1, 8), []Arg{idx(3), buf(nil)}, ErrDivergentBarrier, []string{"kernel.workgroup.reduce"}},
		{"index overflow", "%n: index, %b: buffer", prelude + `  %big = index.constant 1000000 : index
  %m = index.mul %i, %big : index
  %m2 = index.mul %m, %big : index`, grid(1, 4), []Arg{idx(3), buf(nil)}, ErrOverflow,
			[]string{"index.mul", "index value 1000000000000 does not fit the 32-bit carrier", "workitem (1,0,0)"}},
		// A 32-bit index carrier holds [-2^31, 2^32): 4e9 fits, 6e9 does not.
		{"index overflow in add", "%n: index, %b: buffer", prelude + `  %m = index.add %n, %n : index
  %m3 = index.add %m, %n : index`,
			grid(1, 1), []Arg{idx(2000000000), buf(nil)}, ErrOverflow, []string{"index.add", "index value 6000000000 does not fit the 32-bit carrier"}},
		{"division by zero", "%n: index, %b: buffer, %d: i32", prelude + `  %ii = index.cast %i : index to i32
  %q = scalar.divsi %ii, %d : i32`, grid(1, 4), []Arg{idx(0), buf(nil), {Bits: 0}}, ErrDivideByZero,
			[]string{"scalar.divsi", "integer division by zero"}},
		{"index division by zero", "%n: index, %b: buffer", prelude + `  %q = index.rem %i, %n : index`,
			grid(1, 4), []Arg{idx(0), buf(nil)}, ErrDivideByZero, []string{"index.rem"}},
		{"shift too far", "%n: index, %b: buffer, %s: i32", prelude + `  %one = scalar.constant 1 : i32
  %q = scalar.shli %one, %s : i32`, grid(1, 1), []Arg{idx(0), buf(nil), {Bits: 32}}, ErrShift, []string{"scalar.shli"}},
		{"assert", "%n: index, %b: buffer", prelude + `  %lt = index.cmp ult, %i, %n : index
  kernel.assert %lt "i must stay below n" : i1`, grid(1, 8), []Arg{idx(6), buf(nil)}, ErrAssert,
			[]string{"i must stay below n", "workitem (6,0,0)"}},
		{"negative view dimension", "%n: index, %b: buffer", prelude, grid(1, 1), []Arg{idx(-1), buf(nil)}, ErrOutOfBounds,
			[]string{"negative"}},
		{"misaligned atomic", "%n: index, %b: buffer", `  %off = index.constant 2 : offset
  %c0 = index.constant 0 : index
  %v = buffer.view %b[%off] : buffer -> view<4xi32>
  %one = scalar.constant 1 : i32
  view.atomic.reduce<addi> %one, %v[%c0] {ordering = relaxed, scope = device} : i32, view<4xi32>`,
			grid(1, 1), []Arg{idx(0), buf(make([]byte, 32))}, ErrMisaligned, []string{"byte offset 2"}},
		{"argument count", "%n: index, %b: buffer", prelude, grid(1, 1), []Arg{idx(1)}, ErrArgs, []string{"1 arguments for 2"}},
		{"scalar bits beyond carrier", "%n: index, %b: buffer", prelude, grid(1, 1), []Arg{{Bits: 1 << 40}, buf(nil)}, ErrArgs, []string{"beyond its 32-bit carrier"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := runInline(t, tc.params, tc.body, tc.l, tc.args...)
			if !errors.Is(err, tc.class) {
				t.Fatalf("err = %v, want %v", err, tc.class)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name, params, body string
		class              error
		want               string
	}{
		{"unknown op", "%n: index", `  %x = vendor.magic %n : index`, ErrUnsupported, "inline.loom:5:3: op vendor.magic is not supported"},
		{"strided layout", "%n: index, %b: buffer", `  %z = index.constant 0 : offset
  %v = buffer.view %b[%z] : buffer -> view<4xf32, #ggml.q4_0>`, ErrUnsupported, "view layout #ggml.q4_0"},
		{"index constant too wide", "%n: index", `  %x = index.constant 5000000000 : index`, ErrOverflow, "does not fit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compileInline(t, tc.params, tc.body)
			if !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.class, tc.want)
			}
		})
	}
}

func TestMissingConfig(t *testing.T) {
	m := parseSrc(t, "config.decl @nope : index\n"+inlineKernel("%n: index", `  %x = config.get @nope : index`))
	_, err := Compile([]*loom.Module{m}, "k", Options{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "no value for config @nope") {
		t.Fatalf("err = %v", err)
	}
}

// A failing dispatch must not write outside the buffer: guard bytes stay.
func TestOutOfBoundsNeverWrites(t *testing.T) {
	mem := make([]byte, 64)
	body := prelude + `  %one = scalar.constant 7 : i32
  view.store %one, %v[%i] : i32, view<[%n]xi32>`
	err := runInline(t, "%n: index, %b: buffer", body, grid(1, 16), idx(16), buf(mem[:40]))
	if !errors.Is(err, ErrOutOfBounds) {
		t.Fatalf("err = %v", err)
	}
	for i, b := range mem[40:] {
		if b != 0 {
			t.Fatalf("byte %d beyond the buffer was written", 40+i)
		}
	}
}
