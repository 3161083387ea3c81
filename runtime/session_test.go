package runtime

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRegionSlice(t *testing.T) {
	s := testSession(t)
	r := must(s.Allocate(100))
	sub := must(r.Slice(10, 50))
	cases := []struct {
		name      string
		off, n    int
		wantErr   error
		wantStart int
	}{
		{"whole", 0, 50, nil, 10},
		{"inner", 5, 10, nil, 15},
		{"empty at end", 50, 0, nil, 60},
		{"past end", 51, 0, ErrBounds, 0},
		{"too long", 40, 11, ErrBounds, 0},
		{"negative offset", -1, 2, ErrBounds, 0},
		{"negative length", 0, -1, ErrBounds, 0},
		{"overflowing length", 1, int(^uint(0) >> 1), ErrBounds, 0},
	}
	for _, c := range cases {
		got, err := sub.Slice(c.off, c.n)
		if !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.wantErr)
			continue
		}
		if err == nil && (got.Offset() != c.wantStart || got.Len() != c.n) {
			t.Errorf("%s: got offset %d len %d", c.name, got.Offset(), got.Len())
		}
	}
	if _, err := (Region{}).Slice(0, 0); !errors.Is(err, ErrArgument) {
		t.Errorf("slice of zero region: %v", err)
	}
}

func TestTypedSlices(t *testing.T) {
	s := testSession(t)
	x := must(Alloc[float32](s, 8))
	if x.Len() != 8 || x.Region().Len() != 32 {
		t.Fatalf("Alloc[float32](8): len %d bytes %d", x.Len(), x.Region().Len())
	}
	data := []float32{1, -2, 3.5, 0, 5, 6, 7, 8}
	if err := Upload(s, x, data); err != nil {
		t.Fatal(err)
	}
	if got := must(ReadSlice(s, x)); !slices.Equal(got, data) {
		t.Errorf("ReadSlice = %v", got)
	}
	tail := must(x.Sub(6, 2))
	if got := must(ReadSlice(s, tail)); !slices.Equal(got, data[6:]) {
		t.Errorf("Sub(6,2) = %v", got)
	}
	if _, err := x.Sub(7, 2); !errors.Is(err, ErrBounds) {
		t.Errorf("Sub past end: %v", err)
	}
	if err := Upload(s, x, data[:3]); !errors.Is(err, ErrArgument) {
		t.Errorf("short upload: %v", err)
	}
	h := must(Weights(s, []F16{F16From(1.5), F16From(-0.25)}))
	if got := must(ReadSlice(s, h)); got[0].Float32() != 1.5 || got[1].Float32() != -0.25 {
		t.Errorf("F16 weights read back %v", got)
	}
	raw := must(s.Allocate(10))
	if _, err := SliceOf[float32](raw); !errors.Is(err, ErrArgument) {
		t.Errorf("10 bytes as float32: %v", err)
	}
	if _, err := SliceOf[float32](must(raw.Slice(2, 8))); !errors.Is(err, ErrArgument) {
		t.Errorf("misaligned float32 view: %v", err)
	}
	if v, err := SliceOf[uint16](must(raw.Slice(2, 8))); err != nil || v.Len() != 4 {
		t.Errorf("uint16 view: %v len %d", err, v.Len())
	}
	if _, err := Alloc[int64](s, -1); !errors.Is(err, ErrArgument) {
		t.Errorf("negative Alloc: %v", err)
	}
}

// TestSessionErrors walks the error path of every public method.
func TestSessionErrors(t *testing.T) {
	s := testSession(t)
	other := testSession(t)
	r := must(s.Allocate(64))
	w := must(s.Weight(make([]byte, 64)))
	foreign := must(other.Allocate(64))
	k := fakeKernel(s, "scale",
		ParamInfo{Name: "n", Type: "index", Bytes: 4},
		ParamInfo{Name: "f", Type: "f32", Bytes: 4},
		bufParam("src", AccessRead), bufParam("dst", AccessWrite))
	s.kernels[k.id].info.WorkgroupSize, s.kernels[k.id].info.Static = [3]int{64, 1, 1}, true
	foreignK := fakeKernel(other, "scale")
	okArgs := func() []Arg { return []Arg{Index(16), F32(2), Buffer(r.Read()), Buffer(r.Write())} }
	ok := func() Dispatch { return rawDispatch(s, k, [3]int{1, 1, 1}, [3]int{64, 1, 1}, okArgs()...) }
	with := func(f func([]Arg) []Arg) []Arg { return f(okArgs()) }
	if err := s.Record("ok", []Command{ok()}); err != nil {
		t.Fatalf("valid dispatch: %v", err)
	}
	made := []struct {
		name string
		k    Kernel
		args []Arg
		want error
		msg  string
	}{
		{"foreign region", k, with(func(a []Arg) []Arg { a[2] = Buffer(foreign.Read()); return a }), ErrForeign, "%src"},
		{"foreign kernel", foreignK, okArgs(), ErrForeign, "session"},
		{"zero kernel", Kernel{}, okArgs(), ErrArgument, "zero kernel"},
		{"zero region", k, with(func(a []Arg) []Arg { a[3] = Buffer(Region{}.Write()); return a }), ErrArgument, "%dst"},
		{"written weight", k, with(func(a []Arg) []Arg { a[3] = Buffer(w.Write()); return a }), ErrWeightWrite, "%dst"},
		{"read binding for written buffer", k, with(func(a []Arg) []Arg { a[3] = Buffer(r.Read()); return a }), ErrArgument, "needs write"},
		{"too few args", k, with(func(a []Arg) []Arg { return a[:3] }), ErrArgument, "3 arguments"},
		{"scalar kind", k, with(func(a []Arg) []Arg { a[1] = I32(2); return a }), ErrArgument, "%f"},
		{"float as index", k, with(func(a []Arg) []Arg { a[0] = F32(16); return a }), ErrArgument, "%n"},
		{"buffer for scalar", k, with(func(a []Arg) []Arg { a[0] = Buffer(r.Read()); return a }), ErrArgument, "%n"},
		{"index beyond carrier", k, with(func(a []Arg) []Arg { a[0] = Index(1 << 31); return a }), ErrArgument, "32-bit"},
		{"no launch config to evaluate", k, okArgs(), ErrArgument, "no launch configuration"},
	}
	for _, c := range made {
		if _, err := s.NewDispatch(c.k, nil, c.args); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("NewDispatch with %s: %v, want %v mentioning %q", c.name, err, c.want, c.msg)
		}
	}
	otherP := newPipeline(t, other)
	cases := []struct {
		name string
		cmd  Command
		want error
		msg  string
	}{
		{"zero dispatch", Dispatch{}, ErrArgument, "zero Dispatch"},
		{"dispatch of another session", otherP.nopD(foreign.Read()), ErrForeign, "session"},
		{"fill of weight", Fill{Region: w}, ErrWeightWrite, "weight"},
		{"misaligned fill", Fill{Region: must(r.Slice(2, 8))}, ErrArgument, "multiples of 4"},
		{"foreign fill", Fill{Region: foreign}, ErrForeign, "fill"},
		{"nil command", nil, ErrArgument, "unsupported"},
	}
	for _, c := range cases {
		for _, via := range []string{"record", "run"} {
			var err error
			if via == "record" {
				err = s.Record("k-"+c.name, []Command{ok(), c.cmd})
			} else {
				err = s.Run([]Command{c.cmd})
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%s via %s: %v, want %v mentioning %q", c.name, via, err, c.want, c.msg)
			}
			if via == "record" && s.IsRecorded("k-"+c.name) {
				t.Errorf("%s: failed record was stored", c.name)
			}
		}
	}
	if err := s.Record("ok", []Command{ok()}); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("duplicate key: %v", err)
	}
	if err := s.Record("empty", nil); !errors.Is(err, ErrEmptyGraph) {
		t.Errorf("empty graph: %v", err)
	}
	for name, err := range map[string]error{
		"replay":  s.Replay("missing"),
		"graph":   second(s.Graph("missing")),
		"bench":   second(s.Benchmark("missing", 10)),
		"profile": second(s.ProfileCommands("missing", 10)),
	} {
		if !errors.Is(err, ErrNotRecorded) {
			t.Errorf("%s of missing key: %v", name, err)
		}
	}
	if _, err := s.Benchmark("ok", 9); !errors.Is(err, ErrArgument) {
		t.Errorf("9 samples: %v", err)
	}
	if _, err := s.ProfileCommands("ok", 0); !errors.Is(err, ErrArgument) {
		t.Errorf("0 profile samples: %v", err)
	}
	if err := s.Upload(w, make([]byte, 64)); !errors.Is(err, ErrWeightWrite) {
		t.Errorf("upload into weight: %v", err)
	}
	if err := s.Upload(foreign, make([]byte, 64)); !errors.Is(err, ErrForeign) {
		t.Errorf("upload into foreign: %v", err)
	}
	if err := s.Upload(r, make([]byte, 3)); !errors.Is(err, ErrArgument) {
		t.Errorf("upload size mismatch: %v", err)
	}
	if _, err := s.Read(foreign); !errors.Is(err, ErrForeign) {
		t.Errorf("read foreign: %v", err)
	}
	if _, err := s.KernelInfo(foreignK); !errors.Is(err, ErrForeign) {
		t.Errorf("KernelInfo foreign: %v", err)
	}
	if _, err := s.LaunchConfig(foreignK, nil); !errors.Is(err, ErrForeign) {
		t.Errorf("LaunchConfig foreign: %v", err)
	}
	if _, err := s.KernelInfo(Kernel{}); !errors.Is(err, ErrArgument) {
		t.Errorf("KernelInfo of the zero kernel: %v", err)
	}
	if _, err := s.ReadMany([]Region{r, foreign}); !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "read #1") {
		t.Errorf("ReadMany with a foreign region: %v", err)
	}
	if _, err := s.Read(Region{}); !errors.Is(err, ErrArgument) {
		t.Errorf("read of the zero region: %v", err)
	}
	if err := s.Upload(Region{}, nil); !errors.Is(err, ErrArgument) {
		t.Errorf("upload into the zero region: %v", err)
	}
	if _, err := SliceOf[float32](Region{}); !errors.Is(err, ErrArgument) {
		t.Errorf("typed view of the zero region: %v", err)
	}
	if _, err := s.Allocate(-1); !errors.Is(err, ErrArgument) {
		t.Errorf("negative allocate: %v", err)
	}
	if err := s.ReserveReadback(-1); !errors.Is(err, ErrArgument) {
		t.Errorf("negative reserve: %v", err)
	}
	// None of the above made the session unusable.
	if _, err := s.Allocate(4); err != nil {
		t.Errorf("session unusable after check errors: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestClosedSession(t *testing.T) {
	s := testSession(t)
	r := must(s.Allocate(8))
	if err := s.Record("g", []Command{Fill{Region: r}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	calls := map[string]error{
		"Allocate":        second(s.Allocate(8)),
		"AllocateShared":  second(s.AllocateShared(8)),
		"Weight":          second(s.Weight([]byte{1})),
		"Upload":          s.Upload(r, make([]byte, 8)),
		"Record":          s.Record("h", []Command{Fill{Region: r}}),
		"Replay":          s.Replay("g"),
		"Run":             s.Run([]Command{Fill{Region: r}}),
		"Synchronize":     s.Synchronize(),
		"Read":            second(s.Read(r)),
		"ReadMany":        second(s.ReadMany([]Region{r})),
		"ReserveReadback": s.ReserveReadback(8),
		"Benchmark":       second(s.Benchmark("g", 10)),
		"ProfileCommands": second(s.ProfileCommands("g", 10)),
		"Compile":         second(s.Compile(nil)),
		"Graph":           second(s.Graph("g")),
		"KernelInfo":      second(s.KernelInfo(Kernel{})),
		"LaunchConfig":    second(s.LaunchConfig(Kernel{}, nil)),
	}
	for name, err := range calls {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if s.IsRecorded("g") {
		t.Errorf("IsRecorded after Close")
	}
}

// TestDeviceFailure: a backend failure in upload, replay, synchronize,
// readback or direct execution makes the session refuse further work and say
// what failed.
func TestDeviceFailure(t *testing.T) {
	cases := []struct {
		fault string
		do    func(s *Session, r Region) error
		what  string
	}{
		{"upload", func(s *Session, r Region) error { return s.Upload(r, make([]byte, 16)) }, "upload"},
		{"launchGraph", func(s *Session, r Region) error { return s.Replay("g") }, `replay "g"`},
		{"synchronize", func(s *Session, r Region) error { return s.Synchronize() }, "synchronize"},
		{"download", func(s *Session, r Region) error { return second(s.Read(r)) }, "readback"},
		{"fill", func(s *Session, r Region) error { return s.Run([]Command{Fill{Region: r}}) }, "run: command 0"},
		{"buildGraph", func(s *Session, r Region) error { return s.Record("g2", []Command{Fill{Region: r}}) }, `record "g2": build graph`},
	}
	for _, c := range cases {
		s, fb := faultySession(2)
		fb.noHost = true
		r := must(s.Allocate(16))
		if err := s.Record("g", []Command{Fill{Region: r, Value: 1}}); err != nil {
			t.Fatal(err)
		}
		fb.failOn = c.fault
		err := c.do(s, r)
		if !errors.Is(err, ErrDevice) || !errors.Is(err, errInjected) || !strings.Contains(err.Error(), c.what) {
			t.Errorf("%s: first error %v", c.fault, err)
		}
		fb.failOn = ""
		err = s.Replay("g")
		if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), c.what) {
			t.Errorf("%s: later call: %v, want ErrUnusable naming %q", c.fault, err, c.what)
		}
		if _, err := s.Allocate(4); !errors.Is(err, ErrUnusable) {
			t.Errorf("%s: allocate after failure: %v", c.fault, err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: Close after failure: %v", c.fault, err)
		}
	}
}

// TestFillGraph replays a graph of overlapping fills, with independent
// nodes running concurrently, and compares it with direct execution.
func TestFillGraph(t *testing.T) {
	for _, workers := range []int{1, 4} {
		s, _ := faultySession(workers)
		a := must(s.Allocate(4096))
		b := must(s.Allocate(4096))
		var cmds []Command
		for i := range 64 {
			cmds = append(cmds, Fill{Region: must(a.Slice(i*64, 64)), Value: uint32(i)})
			cmds = append(cmds, Fill{Region: must(b.Slice((i%8)*512, 512)), Value: uint32(1000 + i)})
		}
		cmds = append(cmds, Fill{Region: must(a.Slice(1000, 2000)), Value: 0xdeadbeef})
		if err := s.Record("fills", cmds); err != nil {
			t.Fatal(err)
		}
		if err := s.Replay("fills"); err != nil {
			t.Fatal(err)
		}
		graph := must(s.ReadMany([]Region{a, b}))
		want := make([]byte, 4096)
		for i := range 64 {
			for j := 0; j < 64; j += 4 {
				binary.LittleEndian.PutUint32(want[i*64+j:], uint32(i))
			}
		}
		for j := 1000; j < 3000; j += 4 {
			binary.LittleEndian.PutUint32(want[j:], 0xdeadbeef)
		}
		if !slices.Equal(graph[0], want) {
			t.Fatalf("workers %d: graph replay wrote wrong bytes", workers)
		}
		c := must(s.Allocate(0))
		_ = c
		if err := s.Run([]Command{Fill{Region: a}, Fill{Region: b}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Run(cmds); err != nil {
			t.Fatal(err)
		}
		direct := must(s.ReadMany([]Region{a, b}))
		if !slices.Equal(direct[0], graph[0]) || !slices.Equal(direct[1], graph[1]) {
			t.Errorf("workers %d: direct and graph differ", workers)
		}
		s.Close()
	}
}

// TestReadManyStaging: one synchronize per call, one staging buffer reused
// across calls, and ReserveReadback pre-sizes it.
func TestReadManyStaging(t *testing.T) {
	s, fb := faultySession(1)
	fb.noHost = true
	a := must(s.Allocate(100))
	b := must(s.Allocate(28))
	if err := s.Upload(a, slices.Repeat([]byte{7}, 100)); err != nil {
		t.Fatal(err)
	}
	if err := s.ReserveReadback(256); err != nil {
		t.Fatal(err)
	}
	st := &s.staging[:1][0]
	fb.syncs = 0
	out := must(s.ReadMany([]Region{a, b, must(a.Slice(90, 10))}))
	if fb.syncs != 1 {
		t.Errorf("ReadMany synchronized %d times", fb.syncs)
	}
	if len(out) != 3 || len(out[0]) != 100 || out[0][99] != 7 || len(out[1]) != 28 || out[1][0] != 0 || len(out[2]) != 10 || out[2][0] != 7 {
		t.Errorf("ReadMany returned wrong data")
	}
	out[0][0] = 99 // results are the caller's: no aliasing with staging or each other
	again := must(s.ReadMany([]Region{a}))
	if again[0][0] != 7 {
		t.Errorf("result aliased the staging buffer")
	}
	if &s.staging[:1][0] != st {
		t.Errorf("staging buffer was reallocated")
	}
}

func TestSummarize(t *testing.T) {
	var ms []time.Duration
	for i := 20; i >= 1; i-- {
		ms = append(ms, time.Duration(i)*time.Millisecond)
	}
	d := summarize(ms)
	if d.Median != 10*time.Millisecond || d.P95 != 19*time.Millisecond || d.Min != time.Millisecond || d.Max != 20*time.Millisecond || d.Samples != 20 {
		t.Errorf("summarize(1..20ms) = %+v", d)
	}
	d = summarize(ms[10:]) // 10..1 ms
	if d.Median != 5*time.Millisecond || d.P95 != 10*time.Millisecond {
		t.Errorf("summarize(1..10ms) = %+v", d)
	}
}

// TestBenchmarkOrder: ten untimed warm-up pairs, then samples alternating
// which of graph and direct goes first.
func TestBenchmarkOrder(t *testing.T) {
	s, fb := faultySession(1)
	fb.logFills = true
	r := must(s.Allocate(16))
	if err := s.Record("one", []Command{Fill{Region: r, Value: 3}}); err != nil {
		t.Fatal(err)
	}
	res := must(s.Benchmark("one", 12))
	if res.Graph.Samples != 12 || res.Direct.Samples != 12 || res.Commands != 1 {
		t.Errorf("result %+v", res)
	}
	var want []string
	for range 10 {
		want = append(want, "graph", "direct")
	}
	for i := range 12 {
		if i%2 == 0 {
			want = append(want, "graph", "direct")
		} else {
			want = append(want, "direct", "graph")
		}
	}
	if !slices.Equal(fb.log, want) {
		t.Errorf("order %v\nwant  %v", fb.log, want)
	}
	prof := must(s.ProfileCommands("one", 10))
	if len(prof) != 1 || prof[0].Samples != 10 {
		t.Errorf("ProfileCommands = %+v", prof)
	}
}
