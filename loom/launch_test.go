package loom

import (
	"errors"
	"strings"
	"testing"
)

func idx(v int64) Const { return Const{Type: typeIndex, Int: v} }

func TestLaunchConfig(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		env     Env
		static  bool
		want    Geometry
		wantErr string
	}{
		{
			name: "static",
			src: `
kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  %g = index.constant 4 : index
  %w = index.constant 256 : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%w, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			static: true,
			want:   Geometry{[3]int64{4, 1, 1}, [3]int64{256, 1, 1}, [3]int64{1, 1, 1}},
		},
		{
			name: "memory-space probe of a workload buffer",
			src: `
kernel.def export("k") @k(%b: buffer) {
  %c1 = index.constant 1 : index
  %s = test.fact_buffer_memory_space %b : buffer -> i64
  %g = index.cast %s : i64 to index
  %w = index.constant 64 : index
  %c3 = index.constant 3 : index
  %gs = index.mul %g, %c3 : index
  kernel.launch.config workgroups(%gs, %c1, %c1) workgroup_size(%w, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			static: true,
			want:   Geometry{[3]int64{3, 1, 1}, [3]int64{64, 1, 1}, [3]int64{1, 1, 1}},
		},
		{
			name: "workload dependent 2-D with cluster",
			src: `
kernel.def export("k") @k(%m: index, %n: index) {
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %t = index.constant 16 : index
  %tm1 = index.sub %t, %c1 : index
  %pm = index.add %m, %tm1 : index
  %gm = index.div %pm, %t : index
  %pn = index.madd %n, %c1, %tm1 : index
  %gn = index.div %pn, %t : index
  kernel.launch.config workgroups(%gn, %gm, %c1) workgroup_size(%t, %t, %c1) cluster_size(%c2, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			env:  Env{Workload: []Const{idx(100), idx(33)}},
			want: Geometry{[3]int64{3, 7, 1}, [3]int64{16, 16, 1}, [3]int64{2, 1, 1}},
		},
		{
			name: "config dependent with select and subgroup size",
			src: `
config.decl @demo.wg : %v: index where [range(%v, 32, 1024), pow2(%v)]
config.decl @demo.wide : i1
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = config.get @demo.wg : index
  %wide = config.get @demo.wide : i1
  %sg = target.subgroup.size : index
  %two = index.mul %sg, %c1 : index
  %size = scf.select %wide, %wg, %two : index
  %g = index.div %n, %size : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%size, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			env: Env{Workload: []Const{idx(4096)}, Config: map[string]Const{
				"demo.wg": idx(512), "demo.wide": {Type: typeBool, Int: 1}}},
			want: Geometry{[3]int64{8, 1, 1}, [3]int64{512, 1, 1}, [3]int64{1, 1, 1}},
		},
		{
			name: "config.def supplies a default",
			src: `
config.decl @demo.wg : index
config.def @demo.wg = 64 : index
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = config.get @demo.wg : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			env:  Env{Workload: []Const{idx(5)}},
			want: Geometry{[3]int64{5, 1, 1}, [3]int64{64, 1, 1}, [3]int64{1, 1, 1}},
		},
		{
			name: "pure call inlined",
			src: `
func.def pure @ceil_div(%a: index, %b: index) -> (index) {
  %c1 = index.constant 1 : index
  %bm1 = index.sub %b, %c1 : index
  %s = index.add %a, %bm1 : index
  %q = index.div %s, %b : index
  func.return %q : index
}
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 64 : index
  %g = func.call pure @ceil_div(%n, %wg) : (index, index) -> (index)
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			env:  Env{Workload: []Const{idx(65)}},
			want: Geometry{[3]int64{2, 1, 1}, [3]int64{64, 1, 1}, [3]int64{1, 1, 1}},
		},
		{
			name: "unevaluable op names op and position",
			src: `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %w = vendor.random : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%w, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			wantErr: "m0.loom:3:3: vendor.random cannot be evaluated",
		},
		{
			name: "division by zero at evaluation",
			src: `
kernel.def export("k") @k(%n: index, %d: index) {
  %c1 = index.constant 1 : index
  %g = index.div %n, %d : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			env:     Env{Workload: []Const{idx(8), idx(0)}},
			wantErr: "m0.loom:3:3: index div by zero",
		},
		{
			name: "result outside the 32-bit index carrier",
			src: `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %big = index.mul %n, %n : index
  kernel.launch.config workgroups(%big, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			env:     Env{Workload: []Const{idx(100000)}},
			wantErr: "m0.loom:3:3: index result 10000000000 does not fit the 32-bit index carrier",
		},
		{
			// Index shifts are over the 64-bit logical value, counts 0..63
			// (LOOM.md 6.1): (n << 28) >> 26 is 4n, -8 >>u 61 is 7 and
			// -8 >>s 40 is -1 (each intermediate fits the carrier).
			name: "index shifts over 64 bits",
			src: `
kernel.def export("k") @k(%n: index, %m: index) {
  %c2 = index.constant 2 : index
  %c26 = index.constant 26 : index
  %c28 = index.constant 28 : index
  %c40 = index.constant 40 : index
  %c61 = index.constant 61 : index
  %a = index.shli %n, %c28 : index
  %g = index.shrui %a, %c26 : index
  %w = index.shrui %m, %c61 : index
  %s = index.shrsi %m, %c40 : index
  %d = index.add %s, %c2 : index
  kernel.launch.config workgroups(%g, %w, %d) workgroup_size(%d, %d, %d) : index
} launch(%b: buffer) {
  kernel.return
}`,
			env:  Env{Workload: []Const{idx(5), idx(-8)}},
			want: Geometry{[3]int64{20, 7, 1}, [3]int64{1, 1, 1}, [3]int64{1, 1, 1}},
		},
		{
			name: "index shift count past 63",
			src: `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %c64 = index.constant 64 : index
  %g = index.shrui %n, %c64 : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			env:     Env{Workload: []Const{idx(5)}},
			wantErr: "m0.loom:4:3: index shift by 64 is outside 0..63",
		},
		{
			name: "negative index.div operand",
			src: `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %g = index.div %n, %c2 : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`,
			env:     Env{Workload: []Const{idx(-4)}},
			wantErr: "m0.loom:4:3: index div of negative operands",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parseProgram(t, tc.src)
			k := mustKernel(t, p, "k")
			g, err := p.LaunchConfig(k, &tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				if !errors.Is(err, ErrEval) && !errors.Is(err, ErrNotEvaluable) {
					t.Errorf("error %v is neither ErrEval nor ErrNotEvaluable", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g != tc.want {
				t.Errorf("geometry = %+v, want %+v", g, tc.want)
			}
			l, err := p.LaunchExprs(k)
			if err != nil {
				t.Fatal(err)
			}
			sg, ok := l.StaticGeometry()
			if ok != tc.static || (ok && sg != tc.want) {
				t.Errorf("StaticGeometry = %+v, %v; want static=%v", sg, ok, tc.static)
			}
		})
	}
}

func TestLaunchExprsDeps(t *testing.T) {
	p := parseProgram(t, `
config.decl @c.x : index
kernel.def export("k") @k(%n: index, %unused: index) {
  %c1 = index.constant 1 : index
  %x = config.get @c.x : index
  %g = index.add %n, %x : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%x, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`)
	l, err := p.LaunchExprs(mustKernel(t, p, "k"))
	if err != nil {
		t.Fatal(err)
	}
	d := l.Deps()
	if len(d.Workload) != 1 || d.Workload[0] != 0 || len(d.Config) != 1 || d.Config[0] != "c.x" {
		t.Errorf("deps = %+v", d)
	}
	if _, ok := l.StaticWorkgroupSize(); ok {
		t.Error("config-dependent workgroup size reported static")
	}
	if got := l.Workgroups[0].String(); got != "(add w0 @c.x)" {
		t.Errorf("workgroups[0] = %s", got)
	}
}

// TestWorkloadGeometry: the geometry for integer workload arguments, with
// config.def values filled in; a wrong argument count or export is an
// error naming the kernel.
func TestWorkloadGeometry(t *testing.T) {
	m, err := ParseFile("wg.loom", []byte(`
config.decl @demo.wg : index
config.def @demo.wg = 64 : index
kernel.def export("k") @k(%n: index, %m: index) {
  %c1 = index.constant 1 : index
  %wg = config.get @demo.wg : index
  kernel.launch.config workgroups(%n, %m, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%b: buffer) {
  kernel.return
}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := WorkloadGeometry(m, "k", TargetGPU, 5, 3)
	if want := (Geometry{[3]int64{5, 3, 1}, [3]int64{64, 1, 1}, [3]int64{1, 1, 1}}); err != nil || g != want {
		t.Fatalf("geometry %+v, %v; want %+v", g, err, want)
	}
	if _, err := WorkloadGeometry(m, "k", TargetGPU, 5); err == nil || !strings.Contains(err.Error(), "k takes 2 workload arguments, 1 given") {
		t.Fatalf("one argument of two: %v", err)
	}
	if _, err := WorkloadGeometry(m, "nope", TargetGPU); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown export: %v", err)
	}
}
