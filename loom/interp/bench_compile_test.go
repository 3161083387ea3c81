package interp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// straightKernel is a kernel of n steps, each a load at the work-item id
// plus a constant (an affine index, a lazy-lanes candidate) folded into
// a running fma: the shape of a fully unrolled loop.
func straightKernel(n int) string {
	var b strings.Builder
	b.WriteString(`kernel.def export("straight") @straight(%n: index) {
  %one = index.constant 1 : index
  %wg = index.constant 64 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%wg, %one, %one) : index
} launch(%n: index, %src: buffer, %dst: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  %zero = index.constant 0 : offset
  %len = index.constant 1048576 : index
  %in = buffer.view %src[%zero] : buffer -> view<[%len]xf32>
  %out = buffer.view %dst[%zero] : buffer -> view<[%len]xf32>
  %acc0 = scalar.constant 0.0 : f32
`)
	for k := range n {
		fmt.Fprintf(&b, "  %%o%d = index.constant %d : index\n", k, k)
		fmt.Fprintf(&b, "  %%j%d = index.add %%i, %%o%d : index\n", k, k)
		fmt.Fprintf(&b, "  %%x%d = view.load %%in[%%j%d] : view<[%%len]xf32> -> f32\n", k, k)
		fmt.Fprintf(&b, "  %%acc%d = scalar.fmaf %%x%d, %%x%d, %%acc%d : f32\n", k+1, k, k, k)
	}
	fmt.Fprintf(&b, "  view.store %%acc%d, %%out[%%i] : f32, view<[%%len]xf32>\n  kernel.return\n}\n", n)
	return b.String()
}

// BenchmarkCompileLong compiles straightKernel at two lengths: the time
// per step should not grow with the length (every pass of Compile is
// linear in the kernel). Compare two commits with
//
//	go test ./loom/interp -run '^$' -bench CompileLong -count 5
func BenchmarkCompileLong(b *testing.B) {
	for _, n := range []int{1000, 8000} {
		m, err := loom.ParseFile("straight.loom", []byte(straightKernel(n)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Compile([]*loom.Module{m}, "straight", Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/step")
		})
	}
}

// oneGroupKernel is a kernel exported as export of one workgroup of 64
// invocations over two f32 buffers, viewed as %in and %out (1024 elements),
// with %i the invocation, %c0 and %c1 index constants and %a0 the f32
// 1.0; body ends with its store into %out.
func oneGroupKernel(export, body string) string {
	return fmt.Sprintf(`kernel.def export(%q) @%s() {
  %%one = index.constant 1 : index
  %%wg = index.constant 64 : index
  kernel.launch.config workgroups(%%one, %%one, %%one) workgroup_size(%%wg, %%one, %%one) : index
} launch(%%src: buffer, %%dst: buffer) {
  %%i = kernel.workitem.dispatch.id<x> : index
  %%zero = index.constant 0 : offset
  %%c0 = index.constant 0 : index
  %%c1 = index.constant 1 : index
  %%len = index.constant 1024 : index
  %%in = buffer.view %%src[%%zero] : buffer -> view<[%%len]xf32>
  %%out = buffer.view %%dst[%%zero] : buffer -> view<[%%len]xf32>
  %%a0 = scalar.constant 1.0 : f32
%s  kernel.return
}
`, export, export, body)
}

// nestedKernel is a kernel of n nested scf.for loops, each carrying one
// f32 that starts uniform and turns varying in the innermost body (it adds
// a per-work-item load), so every loop compiles its body a second time
// with the value varying; the innermost body reads values defined at the
// top, n scopes up. It stores in[i] + 1.
func nestedKernel(n int) string {
	var b strings.Builder
	for k := range n {
		fmt.Fprintf(&b, "  %%r%d = scf.for %%k%d = [%%c0 to %%c1 step %%c1] (%%a%d = %%a%d : f32) -> (f32) {\n", k, k, k+1, k)
	}
	fmt.Fprintf(&b, "  %%x = view.load %%in[%%i] : view<[%%len]xf32> -> f32\n  %%y = scalar.addf %%x, %%a%d : f32\n  scf.yield %%y : f32\n", n)
	for k := n - 1; k > 0; k-- {
		fmt.Fprintf(&b, "  }\n  scf.yield %%r%d : f32\n", k)
	}
	b.WriteString("  }\n  view.store %r0, %out[%i] : f32, view<[%len]xf32>\n")
	return oneGroupKernel("nested", b.String())
}

// BenchmarkCompileNested compiles nestedKernel at two depths (the parser
// allows 200): ns/level should grow at most linearly with the depth, since
// each loop compiles what it encloses twice. same-start is
// sameStartKernel, whose loops all start from one uniform value: 2^n
// compiles of the innermost body without the loop hints (loophint.go).
func BenchmarkCompileNested(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
		src  func(int) string
	}{{"depth", 25, nestedKernel}, {"depth", 190, nestedKernel}, {"same-start", 16, sameStartKernel}} {
		n := c.n
		m, err := loom.ParseFile("nested.loom", []byte(c.src(n)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s=%d", c.name, n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Compile([]*loom.Module{m}, "nested", Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/level")
		})
	}
}

// BenchmarkCompilePackage compiles every kernel of one file of 16 tensor-core
// matmuls, as a session's Compile of a package does; ns/kernel should not
// grow with the package (each compile lowers and reads only its kernel and
// the functions, loom.OnlyKernel).
func BenchmarkCompilePackage(b *testing.B) {
	mods, err := loom.ParseFiles("../ptx/testdata/matmul_tc.loom")
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		n = 0
		for _, k := range mods[0].Kernels {
			if _, err := Compile(mods, k.Export, Options{}); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/kernel")
}
