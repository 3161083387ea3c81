package ptx

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/crosscheck"
	"github.com/loomgen/loomgen/loom"
)

// exactFill overwrites a case's buffers with values whose products and
// partial sums are exact in every accumulator type the fragment kernels
// use (multiples of 1/2 in [-2, 2]; integers in [-32, 32]), so tensor
// cores must agree with the CPU executor bit for bit.
func exactFill(c *crosscheck.Case, seed uint32) {
	s := seed
	next := func() int {
		s = s*1664525 + 1013904223
		return int(s>>24)%9 - 4
	}
	for i, a := range c.Args {
		el := c.Elems[i]
		if a.Buffer == nil || el == nil {
			continue
		}
		size := carrierBytes(el)
		for off := 0; off+size <= len(a.Buffer); off += size {
			v := next()
			switch {
			case isHalf(el):
				binary.LittleEndian.PutUint16(a.Buffer[off:], halfBits(el, float64(v)/2))
			case el.Name == "f32":
				binary.LittleEndian.PutUint32(a.Buffer[off:], math.Float32bits(float32(v)/2))
			case size == 1:
				a.Buffer[off] = byte(int8(8 * v))
			case size == 4:
				binary.LittleEndian.PutUint32(a.Buffer[off:], uint32(int32(8*v)))
			}
		}
	}
	c.Accuracy = crosscheck.Accuracy{}
}

// TestFragmentPTX checks how fragments lower: tensor-core instructions for
// every subgroup kernel of fragment_mma.loom, ldmatrix for the
// workgroup-staged matmul, scalar FMAs for dense fragments.
func TestFragmentPTX(t *testing.T) {
	m := parse(t, filepath.Join("..", "testdata", "fragment_mma.loom"))
	want := map[string]string{
		"fragment_f16_f32":    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
		"fragment_bf16_f32":   "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
		"fragment_f16_f16":    "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
		"fragment_i8_i32":     "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
		"fragment_u8_i32":     "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32",
		"fragment_splat_init": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
		"fragment_lane_ops":   "bar.warp.sync", // the shared-memory exchange between layouts
		"fragment_dense_f32":  "fma.rn.f32",
	}
	for export, instr := range want {
		k, err := Compile([]*loom.Module{m}, export, Options{})
		if err != nil {
			t.Fatalf("%s: %v", export, err)
		}
		if !strings.Contains(k.PTX, instr) {
			t.Errorf("%s: no %s in\n%s", export, instr, k.PTX)
		}
		if export != "fragment_lane_ops" && strings.Contains(k.PTX, "bar.warp.sync") {
			t.Errorf("%s: fragments go through Loom's layout where nothing reads their lanes", export)
		}
	}
	mm := parse(t, filepath.Join("testdata", "matmul_tc.loom"))
	for _, kd := range mm.Kernels {
		export := kd.Export
		k, err := Compile([]*loom.Module{mm}, export, Options{})
		if err != nil {
			t.Fatalf("%s: %v", export, err)
		}
		// 16-byte copies: the workgroup tiles are 16-byte aligned and their
		// rows keep that alignment; the async kernels copy with cp.async
		// (L2 only: device-scope copies), the staged ones through registers.
		want := []string{"ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "mma.sync"}
		if strings.Contains(export, "_wg") {
			// Warpgroups: wgmma reads both tiles itself through
			// descriptors (wgmma.go); TestWgmmaGroups covers other targets.
			want = []string{".target sm_90a", "wgmma.mma_async.sync.aligned.m64n128k16.f32." + strings.Split(export, "_")[2],
				"wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0", "fence.proxy.async.shared::cta", ", 1, 1, 0, 1;"}
			for _, no := range []string{"mma.sync", "ldmatrix"} {
				if strings.Contains(k.PTX, no) {
					t.Errorf("%s: %s beside wgmma", export, no)
				}
			}
		}
		if strings.HasSuffix(export, "_staged") {
			want = append(want, "ld.global.v4.s32", "st.shared.v4.s32")
		} else {
			want = append(want, "cp.async.cg.shared.global", "cp.async.commit_group", "cp.async.wait_group 0")
		}
		for _, instr := range want {
			if !strings.Contains(k.PTX, instr) {
				t.Errorf("%s: no %s", export, instr)
			}
		}
		// Workgroup memory is addressed in 32 bits (addr.go).
		shared := regexp.MustCompile(`\.shared[^\[]*\[%rd|%rd\d+, __loom_(dyn_)?smem`)
		for _, l := range strings.Split(k.PTX, "\n") {
			if shared.MatchString(l) {
				t.Errorf("%s: a 64-bit workgroup address: %s", export, strings.TrimSpace(l))
			}
		}
	}
}

// TestGPUFragments runs the fragment kernels (and the tensor-core matmul
// at a small size) on exact inputs and requires the GPU's results to equal
// the CPU executor's bit for bit.
func TestGPUFragments(t *testing.T) {
	ctx, s := gpuContext(t)
	for _, file := range []string{filepath.Join("..", "testdata", "fragment_mma.loom"), filepath.Join("testdata", "matmul_tc.loom"), filepath.Join("testdata", "wgmma.loom")} {
		m := parse(t, file)
		for _, kd := range m.Kernels {
			t.Run(kd.Export, func(t *testing.T) {
				cfg := testConfig(m)
				k, err := Compile([]*loom.Module{m}, kd.Export, Options{Config: cfg})
				if err != nil {
					t.Fatal(err)
				}
				c, err := newCase([]*loom.Module{m}, kd, cfg, 7)
				if err != nil {
					t.Fatal(err)
				}
				exactFill(c, 11)
				if name, ok := strings.CutPrefix(kd.Export, "matmul_tc_"); ok {
					// Operands copied as i32 words hold f16 or bf16 values.
					name, _, _ = strings.Cut(name, "_")
					el := &loom.Type{Kind: loom.TypeFloat, Name: name, Bits: 16}
					_, c.Args[3].Buffer = halfOperand(len(c.Args[3].Buffer)/2, 5, el)
					_, c.Args[4].Buffer = halfOperand(len(c.Args[4].Buffer)/2, 6, el)
				}
				want, err := runCPU(c)
				if err != nil {
					t.Fatalf("CPU executor: %v", err)
				}
				got := runGPU(t, ctx, s, k, c, 0)
				for j := range got {
					if got[j] == nil {
						continue
					}
					if err := compare(c, j, got[j], want[j]); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
}

// TestTensorCoreMatmulCPU checks the benchmark's Loom matmuls themselves
// on the CPU executor against a Go matmul on exact inputs (so a kernel bug
// cannot hide behind agreeing backends), at m = n = k = 256 (several
// workgroups, several steps through every workgroup buffer).
// LOOM_TC_KERNELS names another file of such kernels to check instead.
func TestTensorCoreMatmulCPU(t *testing.T) {
	m := parse(t, tensorKernels())
	const rows, cols, depth = 256, 256, 256
	for _, kd := range m.Kernels {
		c, av, bv := tensorCase(t, m, kd.Export, rows, cols, depth)
		out, err := runCPU(c)
		if err != nil {
			t.Fatalf("%s: %v", kd.Export, err)
		}
		requireMatmul(t, kd.Export, f32s(out[5]), av, bv, rows, cols, depth)
	}
}

// TestGPUTensorCoreMatmul runs the benchmark's Loom matmuls on the GPU at
// 256×384×448 — 7 steps of 64: two loop trips through the three stages
// and one step after them — on exact inputs (every partial sum is a
// multiple of 1/4096 below 2^11, so any summation order gives the same
// f32) and requires C to equal a Go matmul.
func TestGPUTensorCoreMatmul(t *testing.T) {
	ctx, s := gpuContext(t)
	m := parse(t, tensorKernels())
	const rows, cols, depth = 256, 384, 448
	for _, kd := range m.Kernels {
		t.Run(kd.Export, func(t *testing.T) {
			k, err := Compile([]*loom.Module{m}, kd.Export, Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, av, bv := tensorCase(t, m, kd.Export, rows, cols, depth)
			out := runGPU(t, ctx, s, k, c, 0)
			requireMatmul(t, kd.Export, f32s(out[5]), av, bv, rows, cols, depth)
		})
	}
}

// tensorKernels is the file of matmul_tc kernels the tensor-core tests
// and benchmark take.
func tensorKernels() string {
	if f := os.Getenv("LOOM_TC_KERNELS"); f != "" {
		return f
	}
	return filepath.Join("testdata", "matmul_tc.loom")
}

// tensorCase is a matmul_tc launch of rows×cols×depth on exact operands
// (multiples of 1/64 in [-1, 1)), which it also returns as float32.
func tensorCase(t *testing.T, m *loom.Module, export string, rows, cols, depth int) (*crosscheck.Case, []float32, []float32) {
	t.Helper()
	// The kernel copies its operands as i32 words: the element type is in
	// the name.
	name, _, _ := strings.Cut(strings.TrimPrefix(export, "matmul_tc_"), "_")
	el := &loom.Type{Kind: loom.TypeFloat, Name: name, Bits: 16}
	c, err := newCase([]*loom.Module{m}, findKernel(t, m, export), nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	c.Args[0].Bits, c.Args[1].Bits, c.Args[2].Bits = uint64(rows), uint64(cols), uint64(depth)
	av, araw := halfOperand(rows*depth, 5, el)
	bv, braw := halfOperand(depth*cols, 6, el)
	c.Args[3].Buffer, c.Args[4].Buffer = araw, braw
	c.Args[5].Buffer = make([]byte, 4*rows*cols)
	grid, block, storage, err := tensorLaunch(m, export, int64(rows), int64(cols), int64(depth))
	if err != nil {
		t.Fatal(err)
	}
	c.Launch.Workgroups = [3]int{int(grid.X), int(grid.Y), int(grid.Z)}
	c.Launch.WorkgroupSize = [3]int{int(block.X), int(block.Y), int(block.Z)}
	c.Launch.WorkgroupStorage = storage
	return c, av, bv
}

// requireMatmul requires got (rows×cols, row-major) to equal a·b exactly,
// naming the first differing elements and how many differ.
func requireMatmul(t *testing.T, export string, got, a, b []float32, rows, cols, depth int) {
	t.Helper()
	bad := 0
	var first []string
	for i := range rows {
		for j := range cols {
			var s float64
			for e := range depth {
				s += float64(a[i*depth+e]) * float64(b[e*cols+j])
			}
			if float64(got[i*cols+j]) != s {
				if bad++; bad <= 8 {
					first = append(first, fmt.Sprintf("C[%d][%d] = %v, want %v", i, j, got[i*cols+j], s))
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ: %s", export, bad, rows*cols, strings.Join(first, "; "))
	}
}

// tensorLaunch is the geometry and dynamic workgroup storage of a
// matmul_tc kernel for m×n×k.
func tensorLaunch(m *loom.Module, export string, rows, cols, depth int64) (grid, block hip.Dim3, storage int, err error) {
	if grid, block, err = launchGeometry(m, export, rows, cols, depth); err != nil {
		return
	}
	prog, err := loom.NewProgram(m)
	if err != nil {
		return
	}
	kd, err := prog.Kernel(export)
	if err != nil {
		return
	}
	env := &loom.Env{Target: loom.TargetGPU}
	for i, w := range kd.Workload {
		env.Workload = append(env.Workload, loom.Const{Type: w.Type, Int: []int64{rows, cols, depth}[i]})
	}
	n, err := prog.LaunchStorage(kd, env)
	return grid, block, int(n), err
}

func findKernel(t *testing.T, m *loom.Module, export string) *loom.Kernel {
	t.Helper()
	for _, kd := range m.Kernels {
		if kd.Export == export {
			return kd
		}
	}
	t.Fatalf("no kernel %s", export)
	return nil
}
