package runtime

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/hip"
)

// gpuTestPTX is hand-written PTX in the backend's kernel ABI: buffers are
// device addresses, scalars their carrier width.
const gpuTestPTX = `
.version 8.0
.target sm_90
.address_size 64
.visible .entry scale_add(.param .u64 x, .param .u64 y, .param .u32 a, .param .u32 n)
{
	.reg .pred %p;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [y];
	ld.param.u32 %r1, [a];
	ld.param.u32 %r2, [n];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %tid.x;
	mad.lo.s32 %r6, %r3, %r4, %r5;
	setp.ge.u32 %p, %r6, %r2;
	@%p bra DONE;
	mul.wide.u32 %rd3, %r6, 4;
	add.s64 %rd4, %rd1, %rd3;
	add.s64 %rd5, %rd2, %rd3;
	ld.global.u32 %r3, [%rd4];
	ld.global.u32 %r4, [%rd5];
	mad.lo.s32 %r4, %r1, %r3, %r4;
	st.global.u32 [%rd5], %r4;
DONE:
	ret;
}
.visible .entry poke(.param .u64 p)
{
	.reg .b64 %rd1;
	.reg .b32 %r1;
	ld.param.u64 %rd1, [p];
	mov.u32 %r1, 1;
	st.global.u32 [%rd1], %r1;
	ret;
}`

func TestGPUAutoExplainsCPU(t *testing.T) {
	t.Setenv("LOOM_BACKEND", "")
	s, err := Open(Options{Backend: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ptxCompiler == nil && s.Backend() != "cpu" {
		t.Fatalf("auto chose %s without a Loom→PTX compiler", s.Backend())
	}
	r := s.BackendReason()
	switch s.Backend() {
	case "cpu":
		if !strings.Contains(r, "cuda:") {
			t.Fatalf("reason %q does not say why CUDA was not used", r)
		}
	case "cuda":
		if !strings.Contains(r, "cuda device available") {
			t.Fatalf("reason %q does not say CUDA was chosen", r)
		}
	}
	t.Log(s.BackendReason())
}

func openTestGPU(t *testing.T) *gpuBackend {
	t.Helper()
	be, err := openCUDABackend(Options{Backend: "cuda"})
	if errors.Is(err, hip.ErrNoLibrary) || errors.Is(err, hip.ErrNoDevice) {
		t.Skipf("no GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.close() })
	return be.(*gpuBackend)
}

func withPTX(t *testing.T) {
	old := ptxCompiler
	ptxCompiler = func(req *kernelRequest) (compiledPTX, error) {
		return compiledPTX{text: []byte(gpuTestPTX), entry: req.Export}, nil
	}
	t.Cleanup(func() { ptxCompiler = old })
}

func u32s(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func TestGPUBackendPTX(t *testing.T) {
	b := openTestGPU(t)
	if _, err := b.loadKernel(&kernelRequest{Export: "scale_add"}); !errors.Is(err, errNoPTXCompiler) && ptxCompiler == nil {
		t.Fatalf("Loom source without a compiler: %v", err)
	}
	withPTX(t)
	k, err := b.loadKernel(&kernelRequest{Export: "scale_add"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	x, err := b.alloc(4*n, false)
	if err != nil {
		t.Fatal(err)
	}
	y, err := b.alloc(4*n+64, true) // shared: host-visible
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(xs[4*i:], uint32(i))
	}
	if err := b.upload(x, 0, xs); err != nil {
		t.Fatal(err)
	}
	launch := &launchCmd{Kernel: k, Name: "scale_add", Workgroups: [3]int{(n + 127) / 128, 1, 1}, WorkgroupSize: [3]int{128, 1, 1},
		Args: []launchArg{{Buffer: true, Mem: x, N: 4 * n}, {Buffer: true, Mem: y, Off: 64, N: 4 * n}, {Bits: 3, Size: 4}, {Bits: n, Size: 4}}}
	// Direct: fill y with 5, then y += 3*x.
	if err := b.fill(y, 64, 4*n, 5); err != nil {
		t.Fatal(err)
	}
	if err := b.launch(launch); err != nil {
		t.Fatal(err)
	}
	if err := b.synchronize(); err != nil {
		t.Fatal(err)
	}
	host, ok := b.hostBytes(y)
	if !ok {
		t.Fatal("shared allocation has no host view")
	}
	check := func(what string, got []uint32) {
		t.Helper()
		for i, v := range got {
			if v != uint32(3*i+5) {
				t.Fatalf("%s: element %d = %d, want %d", what, i, v, 3*i+5)
			}
		}
	}
	check("direct", u32s(host[64:]))
	// Graph: the same fill and launch with an edge, replayed twice.
	g, err := b.buildGraph([]graphNode{{Fill: &fillCmd{Mem: y, Off: 64, N: 4 * n, Value: 5}}, {Launch: launch, Deps: []int{0}}})
	if err != nil {
		t.Fatal(err)
	}
	for rep := 0; rep < 2; rep++ {
		clear(host)
		if err := b.launchGraph(g); err != nil {
			t.Fatal(err)
		}
		if err := b.synchronize(); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 4*n)
		if err := b.download(got, y, 64); err != nil {
			t.Fatal(err)
		}
		if err := b.synchronize(); err != nil {
			t.Fatal(err)
		}
		check("graph", u32s(got))
	}
	if err := b.freeGraph(g); err != nil {
		t.Fatal(err)
	}
	if err := b.copy(x, 0, y, 64, 4*n); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4*n)
	if err := b.download(got, x, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.synchronize(); err != nil {
		t.Fatal(err)
	}
	check("copy", u32s(got))
	for _, m := range []devMem{x, y} {
		if err := b.free(m); err != nil {
			t.Fatal(err)
		}
	}
}
