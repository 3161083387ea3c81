package ptx

import (
	"errors"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

func parseSrc(t testing.TB, src string) *loom.Module {
	t.Helper()
	m, err := loom.ParseFile("inline.loom", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return m
}

// kernelWith wraps a body in a 1-D kernel with launch(%n, %x: buffer).
func kernelWith(body string) string {
	return `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 64 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %x: buffer) {
  %z = index.constant 0 : offset
  %v = buffer.view %x[%z] : buffer -> view<[%n]xf32>
  %i = kernel.workitem.dispatch.id<x> : index
` + body + `
  kernel.return
}
`
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name, body, op string
		class          error
	}{
		// f32 tanf comes from the shared lowering; f64 is left to the backend.
		{"tanf f64", "%d = buffer.view %x[%z] : buffer -> view<[%n]xf64>\n  %a = view.load %d[%i] : view<[%n]xf64> -> f64\n  %b = scalar.tanf %a : f64\n  view.store %b, %d[%i] : f64, view<[%n]xf64>", "scalar.tanf", ErrUnsupported},
		{"opaque", "vendor.thing %i : index", "vendor.thing", ErrUnsupported},
		{"dynamic alloca", "%b = index.cast %n : index to offset\n  %s = buffer.alloca<workgroup> align(16) %b : buffer", "buffer.alloca", ErrUnsupported},
		{"length", "%l = buffer.length %x : buffer -> offset", "buffer.length", ErrUnsupported},
		{"quantized layout", "%w = buffer.view %x[%z] : buffer -> view<[%n]xf32, #ggml.q4_0>", "", ErrUnsupported},
		{"missing config", "%c = config.get @nope : index", "", ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := parseSrc(t, "config.decl @nope : index\n"+kernelWith(c.body))
			_, err := Compile([]*loom.Module{m}, "k", Options{})
			if !errors.Is(err, c.class) {
				t.Fatalf("want %v, got %v", c.class, err)
			}
			if !strings.HasPrefix(err.Error(), "inline.loom:") {
				t.Errorf("error lacks the position: %v", err)
			}
			if c.op != "" && !strings.Contains(err.Error(), c.op) {
				t.Errorf("error does not name %s: %v", c.op, err)
			}
		})
	}
}

func TestNoKernelAndOldSM(t *testing.T) {
	m := parseSrc(t, kernelWith(""))
	if _, err := Compile([]*loom.Module{m}, "missing", Options{}); !errors.Is(err, loom.ErrNoKernel) {
		t.Errorf("missing export: %v", err)
	}
	if _, err := Compile([]*loom.Module{m}, "k", Options{SM: 75}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("sm_75: %v", err)
	}
	k, err := Compile([]*loom.Module{m}, "k", Options{SM: 89})
	if err != nil || !strings.Contains(k.PTX, ".target sm_89") {
		t.Errorf("sm_89: %v", err)
	}
}

// TestWorkgroupSizeLimit: a static workgroup size the driver cannot launch
// is refused at compile time with the kernel's position.
func TestWorkgroupSizeLimit(t *testing.T) {
	for _, c := range []struct {
		x, z string
		ok   bool
	}{{"1024", "1", true}, {"1056", "1", false}, {"8", "128", false}} {
		src := `kernel.def export("k") @k() {
  %one = index.constant 1 : index
  %x = index.constant ` + c.x + ` : index
  %z = index.constant ` + c.z + ` : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%x, %one, %z) : index
} launch(%out: buffer) {
  kernel.return
}`
		_, err := Compile([]*loom.Module{parseSrc(t, src)}, "k", Options{})
		if c.ok && err != nil || !c.ok && (!errors.Is(err, ErrUnsupported) || !strings.HasPrefix(err.Error(), "inline.loom:1:1:")) {
			t.Errorf("workgroup size %s×1×%s: %v", c.x, c.z, err)
		}
	}
}

func TestParamsAndStorage(t *testing.T) {
	src := `kernel.def export("p") @p(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 128 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %o: offset, %f: i1, %h: f16, %d: f64, %x: buffer, %y: view<[%n]xf32>) {
  %b = index.constant 1000 : offset
  %s = buffer.alloca<workgroup> align(64) %b : buffer
  %t = buffer.alloca<workgroup> align(16) %b : buffer
  kernel.return
}
`
	k, err := Compile([]*loom.Module{parseSrc(t, src)}, "p", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Param{{"n", 4, 4, false}, {"o", 8, 8, false}, {"f", 1, 1, false}, {"h", 2, 2, false},
		{"d", 8, 8, false}, {"x", 8, 8, true}, {"y", 8, 8, true}}
	if len(k.Params) != len(want) {
		t.Fatalf("params %+v", k.Params)
	}
	for i := range want {
		if k.Params[i] != want[i] {
			t.Errorf("param %d = %+v, want %+v", i, k.Params[i], want[i])
		}
	}
	if k.WorkgroupStorageBytes != 2008 { // 1000, padded to 16, then 1000
		t.Errorf("workgroup storage %d, want 2008", k.WorkgroupStorageBytes)
	}
	if k.WorkgroupSize != [3]int64{128, 1, 1} || !strings.Contains(k.PTX, ".reqntid 128, 1, 1") {
		t.Errorf("workgroup size %v", k.WorkgroupSize)
	}
	if err := wellFormed(k.PTX); err != nil {
		t.Error(err)
	}
}

// TestHalfBits checks the one-step f16/bf16 rounding of constants against
// an independent conversion, over a sweep of float32 bit patterns.
func TestHalfBits(t *testing.T) {
	f16 := &loom.Type{Kind: loom.TypeFloat, Name: "f16", Bits: 16}
	bf16 := &loom.Type{Kind: loom.TypeFloat, Name: "bf16", Bits: 16}
	for b := uint32(0); b < 1<<32-1<<19; b += 1<<19 + 7 {
		f := math.Float32frombits(b)
		if math.IsNaN(float64(f)) {
			continue
		}
		if got, want := halfBits(f16, float64(f)), float16.Fromfloat32(f).Bits(); got != want {
			t.Fatalf("f16(%g): %#04x, want %#04x", f, got, want)
		}
		// bf16 by round-to-nearest-even on the f32 bits.
		r := b + 0x7fff + (b>>16)&1
		if got, want := halfBits(bf16, float64(f)), uint16(r>>16); got != want && !math.IsInf(float64(f), 0) {
			t.Fatalf("bf16(%g): %#04x, want %#04x", f, got, want)
		}
	}
}

// FuzzCompile feeds arbitrary sources through the parser and compiles every
// kernel: the compiler may refuse, but must never fail internally.
func FuzzCompile(f *testing.F) {
	for _, p := range []string{"../testdata/saxpy.loom", "../testdata/softmax_row.loom", "../testdata/while_collatz.loom", "../testdata/subgroup_reduce.loom",
		"../testdata/fragment_mma.loom", "testdata/matmul_tc.loom", "testdata/wgmma.loom",
		// The shared lowering's ops (loom.Lower), alignment guards and providers.
		"../testdata/ops_bits.loom", "../testdata/ops_math.loom", "../testdata/ops_misc.loom",
		"../testdata/unaligned_access.loom", "../testdata/target_providers.loom",
		// Unstructured control flow, structured by the shared lowering.
		"../testdata/cfg_flow.loom",
		// Asynchronous copies (cp.async), deferred across a loop's back
		// edge, and index values past 2^31-1.
		"../testdata/ops_async.loom", "testdata/async_defer.loom", "../testdata/ops_index_wide.loom",
		// Lane moves, block-quantized decode/encode, table quantize.
		"../testdata/block_quant.loom",
		// Index shifts and rotates over 64 bits; signs, turns, softplus, gelu.
		"../testdata/index_shift64.loom", "../testdata/ops_sign_turns.loom", "../testdata/ops_gelu.loom",
		"../testdata/ops_rotate.loom", "../testdata/ops_log1p_expm1.loom",
		"../testdata/ops_atan_hyp.loom", "../testdata/ops_libm.loom"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := loom.ParseFile("fuzz.loom", src)
		if err != nil || m == nil {
			return
		}
		for _, kd := range m.Kernels {
			if kd.Decl {
				continue
			}
			_, err := Compile([]*loom.Module{m}, kd.Export, Options{})
			if err != nil && (strings.Contains(err.Error(), "internal error") || strings.Contains(err.Error(), "internal:")) {
				t.Fatal(err)
			}
		}
	})
}

// TestProvidersAgree: both executors resolve every template apply of
// target_providers.loom to the same provider and report it.
func TestProvidersAgree(t *testing.T) {
	m := parse(t, "../testdata/target_providers.loom")
	for _, export := range []string{"providers_neutral", "providers_vk"} {
		k, err := Compile([]*loom.Module{m}, export, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ik, err := interp.Compile([]*loom.Module{m}, export, interp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(k.Providers) == 0 || strings.Join(k.Providers, "\n") != strings.Join(ik.Providers(), "\n") {
			t.Errorf("%s: PTX ran %v, the CPU executor %v", export, k.Providers, ik.Providers())
		}
		if !strings.Contains(k.PTX, "resolves to provider @") {
			t.Errorf("%s: the PTX does not say which provider ran", export)
		}
	}
}

// TestDivKeepsAlignment: an index divided by a constant power of two keeps
// the alignment the dividend had above it, so a 16-byte vector access at
// the quotient stays one ld.global.v4 (a lost fact halves mat-vec speed).
func TestDivKeepsAlignment(t *testing.T) {
	src := `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %q: buffer, %o: buffer) where [mul(%n, 16)] {
  %t = kernel.workitem.id<x> : index
  %c4 = index.constant 4 : index
  %c16 = index.constant 16 : index
  %c = index.mul %t, %c16 : index
  %w = index.div %c, %c4 : index
  %z = index.constant 0 : offset
  %qv = buffer.view %q[%z] : buffer -> view<[%n]xi32>
  %ov = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %v = vector.load %qv[%w] : view<[%n]xi32> -> vector<4xi32>
  vector.store %v, %ov[%w] : vector<4xi32>, view<[%n]xi32>
  kernel.return
}`
	// A right shift by a constant keeps the facts as the division does.
	shifted := strings.Replace(src, "%w = index.div %c, %c4 : index", "%two = index.constant 2 : index\n  %w = index.shrui %c, %two : index", 1)
	// So does a minimum or maximum of two multiples (an index clamped into
	// a range): it is one of them.
	clamped := strings.Replace(src, "%w = index.div %c, %c4 : index", "%e = index.sub %n, %c4 : index\n  %w = index.min %c, %e : index", 1)
	widened := strings.Replace(src, "%w = index.div %c, %c4 : index", "%w = index.max %c, %c16 : index", 1)
	// So does a select of two multiples (a row or column chosen between
	// two): it is one of them.
	selected := strings.Replace(src, "%w = index.div %c, %c4 : index", "%p = index.cmp ult, %t, %n : index\n  %d = index.add %c, %c16 : index\n  %s = scf.select %p, %c, %d : index\n  %w = index.div %s, %c4 : index", 1)
	// And an index either branch of an scf.if yields.
	branched := strings.Replace(selected, "%s = scf.select %p, %c, %d : index", "%s = scf.if %p -> (index) {\n    scf.yield %c : index\n  } else {\n    scf.yield %d : index\n  }", 1)
	for _, c := range []struct{ src, op string }{{src, "shr.u32"}, {shifted, "shr.u32"}, {clamped, "min.s32"}, {widened, "max.s32"}, {selected, "selp.b32"}, {branched, "bra"}} {
		k := compileExport(t, c.src, "k")
		for _, want := range []string{c.op, "ld.global.v4.s32", "st.global.v4.s32"} {
			if !strings.Contains(k.PTX, want) {
				t.Errorf("no %s in\n%s", want, k.PTX)
			}
		}
	}
	// A select (or an if) of a multiple and a non-multiple proves nothing:
	// the accesses are split into words.
	for _, from := range []string{selected, branched} {
		odd := strings.Replace(from, "%d = index.add %c, %c16 : index", "%one = index.constant 1 : index\n  %d = index.add %c, %one : index", 1)
		k := compileExport(t, odd, "k")
		for _, text := range []string{k.PTX, k.AlignedPTX} {
			if strings.Contains(text, "ld.global.v4") || strings.Contains(text, "st.global.v4") {
				t.Errorf("a 16-byte access at an index not known to be a multiple of 4:\n%s", text)
			}
		}
	}
}

// TestBindingAlignmentFromSources: the emitter assumes no more alignment
// of a buffer than Dispatch enforces, which comes from the access analysis
// of the sources as written. A buffer passed to a block argument is seen
// through only after lowering (a select), so Dispatch may bind it at any
// byte and its f32 store must test its address; a buffer selected in the
// sources is bound at a multiple of 4 and its accesses need no test.
func TestBindingAlignmentFromSources(t *testing.T) {
	for _, c := range []struct {
		file, export string
		guarded      bool
	}{
		{"../testdata/frontend/cfg_branch_buffer.loom", "k", true},
		{"../testdata/select_buffers.loom", "select_source", false},
	} {
		m := parse(t, c.file)
		p, err := loom.NewProgram(m)
		if err != nil {
			t.Fatal(err)
		}
		kd, err := p.Kernel(c.export)
		if err != nil {
			t.Fatal(err)
		}
		bound := 16
		for _, a := range p.Access(kd) {
			bound = min(bound, a.Alignment())
		}
		if c.guarded != (bound < 4) {
			t.Fatalf("%s: the sources' analysis binds at %d bytes; the test expects otherwise", c.export, bound)
		}
		k, err := Compile([]*loom.Module{m}, c.export, Options{})
		if err != nil {
			t.Fatal(err)
		}
		bytewise := strings.Contains(k.PTX, "st.global.u8") || strings.Contains(k.PTX, "ld.global.u8")
		if bytewise != c.guarded {
			t.Errorf("%s: byte-wise fallback %v, want %v:\n%s", c.export, bytewise, c.guarded, k.PTX)
		}
	}
}

// TestDot4iTakesWords checks that vector.dot4i on the bytes of a word
// (vector.bitcast of an i32, lanes in order) hands dp4a the word itself,
// and that bytes in another order are still packed.
func TestDot4iTakesWords(t *testing.T) {
	src := func(order string) string {
		return `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %a: buffer, %o: buffer) {
  %c0 = index.constant 0 : index
  %z = index.constant 0 : offset
  %av = buffer.view %a[%z] : buffer -> view<2xi32>
  %ov = buffer.view %o[%z] : buffer -> view<1xi32>
  %c1i = index.constant 1 : index
  %x = view.load %av[%c0] : view<2xi32> -> i32
  %y = view.load %av[%c1i] : view<2xi32> -> i32
  %xb = vector.bitcast %x : i32 to vector<4xi8>
  %yb0 = vector.bitcast %y : i32 to vector<4xi8>
  %e0 = vector.extract %yb0[` + order[0:1] + `] : vector<4xi8> -> i8
  %e1 = vector.extract %yb0[` + order[1:2] + `] : vector<4xi8> -> i8
  %e2 = vector.extract %yb0[` + order[2:3] + `] : vector<4xi8> -> i8
  %e3 = vector.extract %yb0[` + order[3:4] + `] : vector<4xi8> -> i8
  %yb = vector.from_elements %e0, %e1, %e2, %e3 : i8, i8, i8, i8 -> vector<4xi8>
  %acc = vector.constant 0 : vector<1xi32>
  %d = vector.dot4i<s8s8> %xb, %yb, %acc : vector<4xi8>, vector<4xi8>, vector<1xi32>
  %s = vector.extract %d[0] : vector<1xi32> -> i32
  view.store %s, %ov[%c0] : i32, view<1xi32>
  kernel.return
}`
	}
	for _, c := range []struct {
		order string
		bfi   int
	}{{"0123", 0}, {"3210", 3}} {
		k, err := Compile([]*loom.Module{parseSrc(t, src(c.order))}, "k", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(k.PTX, "bfi.b32"); n != c.bfi {
			t.Errorf("order %s: %d bfi, want %d:\n%s", c.order, n, c.bfi, k.PTX)
		}
		if !strings.Contains(k.PTX, "dp4a.s32.s32") {
			t.Errorf("order %s: no dp4a", c.order)
		}
	}
}

// TestScalarPoison: scalar.poison compiles for every scalar type, as
// vector.poison does, to a defined register (zero); before, f32 poison
// was refused, so Loom's canonical form of a vector.poison (one
// scalar.poison per lane) did not compile although its input did.
func TestScalarPoison(t *testing.T) {
	for _, typ := range []string{"f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "index"} {
		body := "%p = scalar.poison : " + typ + "\n  %a = view.load %v[%i] : view<[%n]xf32> -> f32\n  view.store %a, %v[%i] : f32, view<[%n]xf32>"
		m := parseSrc(t, kernelWith(body))
		if _, err := Compile([]*loom.Module{m}, "k", Options{}); err != nil {
			t.Errorf("scalar.poison : %s: %v", typ, err)
		}
	}
}

// TestExactShiftAddress: a word index (c + 32) >> 2 of a byte column c
// known to be a multiple of 16 addresses through c + 32 itself, with no
// shift, and a constant index becomes an immediate offset.
func TestExactShiftAddress(t *testing.T) {
	src := `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %q: buffer, %o: buffer) {
  %t = kernel.workitem.id<x> : index
  %c2 = index.constant 2 : index
  %c3 = index.constant 3 : index
  %c16 = index.constant 16 : index
  %c32 = index.constant 32 : index
  %c = index.mul %t, %c16 : index
  %c1c = index.add %c, %c32 : index
  %w = index.shrui %c1c, %c2 : index
  %z = index.constant 0 : offset
  %qv = buffer.view %q[%z] : buffer -> view<[%n]xi32>
  %ov = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %x = view.load %qv[%w] : view<[%n]xi32> -> i32
  view.store %x, %ov[%c3] : i32, view<[%n]xi32>
  kernel.return
}`
	k, err := Compile([]*loom.Module{parseSrc(t, src)}, "k", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`mad\.wide\.s32 %rd\d+, %r\d+, 1, %rd\d+;\n(?:\s*griddepcontrol\.\w+;\n)*\s*ld\.global\.s32`).MatchString(k.PTX) {
		t.Errorf("the load does not address through the unshifted column:\n%s", k.PTX)
	}
	if !regexp.MustCompile(`add\.s64 %rd\d+, %rd\d+, 12;\n\s*st\.global\.s32`).MatchString(k.PTX) {
		t.Errorf("the constant index is not an immediate offset:\n%s", k.PTX)
	}
}

// TestPrefetch: view.prefetch of global memory becomes a PTX prefetch of
// the element's line, L2 unless locality = l1, issued only for indices
// inside the view (Loom's prefetch may not fault); of workgroup memory,
// nothing.
func TestPrefetch(t *testing.T) {
	src := func(attrs, space string) string {
		return `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %q: buffer, %o: buffer) {
  %t = kernel.workitem.id<x> : index
  %c8 = index.constant 8 : index
  %c3 = index.constant 3 : index
  %z = index.constant 0 : offset
  %wb = buffer.alloca<workgroup> align(16) %z : buffer
  %qv = buffer.view ` + space + `[%z] : buffer -> view<[%n]x8xi32>
  %ov = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %i = index.add %t, %c8 : index
  view.prefetch %qv[%i, %c3] {` + attrs + `} : view<[%n]x8xi32>
  %v = view.load %ov[%t] : view<[%n]xi32> -> i32
  view.store %v, %ov[%t] : i32, view<[%n]xi32>
  kernel.return
}`
	}
	for _, c := range []struct {
		name, attrs, space string
		want, not          []string
	}{
		{"l2", "intent = read, locality = l2", "%q", []string{"setp.lt.u32", "prefetch.global.L2 ["}, []string{"L1"}},
		{"l1", "intent = read, locality = l1", "%q", []string{"prefetch.global.L1 ["}, nil},
		{"write", "intent = write, locality = none", "%q", []string{"prefetch.global.L2 ["}, nil},
		{"workgroup", "intent = read, locality = l2", "%wb", nil, []string{"prefetch"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := loom.ParseFile("prefetch.loom", []byte(src(c.attrs, c.space)))
			if err != nil {
				t.Fatal(err)
			}
			k, err := Compile([]*loom.Module{m}, "k", Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(k.PTX, w) {
					t.Errorf("no %q in\n%s", w, k.PTX)
				}
			}
			for _, w := range c.not {
				if strings.Contains(k.PTX, w) {
					t.Errorf("%q in\n%s", w, k.PTX)
				}
			}
			// One guard: the row index against %n; column 3 < 8 is known.
			if c.space == "%q" && strings.Count(k.PTX, "setp.lt.u32") != 1 {
				t.Errorf("want one bounds test (the row), have\n%s", k.PTX)
			}
		})
	}
}
