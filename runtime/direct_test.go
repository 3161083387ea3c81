package runtime

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// spyBackend is the CPU backend noting the packed arguments of every
// launch, so tests see exactly what a Run handed the backend.
type spyBackend struct {
	*cpuBackend
	launched [][]launchArg
}

func (b *spyBackend) launch(l *launchCmd) error {
	b.launched = append(b.launched, slices.Clone(l.Args))
	return b.cpuBackend.launch(l)
}

// TestDirectRunChecksEveryTime: Run of one dispatch reuses its kernel's
// packed launch, and nothing of an earlier, valid run may let a later
// mistake through. The same Dispatch, its Args changed in place after a
// successful run, must be refused with exactly the error the general path
// gives (Run of the command followed by another), launch nothing, and the
// next valid run must launch its own arguments, not a leftover of the
// refused one.
func TestDirectRunChecksEveryTime(t *testing.T) {
	spy := &spyBackend{cpuBackend: newCPUBackend(Options{Workers: 1})}
	s := newSession(spy, "test", Options{Workers: 1})
	t.Cleanup(func() { s.Close() })
	other := testSession(t)
	p := newPipeline(t, s)
	x := must(Alloc[float32](s, 64))
	y := must(Alloc[float32](s, 64))
	z := must(Alloc[float32](s, 64))
	w := must(Weights(s, make([]float32, 64)))
	foreign := must(Alloc[float32](other, 64))
	if err := Upload(s, x, slices.Repeat([]float32{3}, 64)); err != nil {
		t.Fatal(err)
	}
	d := p.squareD(64, x, y)
	good := slices.Clone(d.Args)
	one := []Command{d}
	if err := s.Run(one); err != nil {
		t.Fatal(err)
	}
	xr, yr := x.Region(), y.Region()
	mistakes := []struct {
		name string
		i    int
		arg  Arg
		want error
	}{
		{"foreign source", 1, Buffer(foreign.Read()), ErrForeign},
		{"zero destination", 2, Buffer(Region{}.Write()), ErrArgument},
		{"weight written", 2, Buffer(w.Write()), ErrWeightWrite},
		{"destination bound for reading", 2, Buffer(y.Read()), ErrArgument},
		{"source past its allocation", 1, Buffer(Region{sess: xr.sess, alloc: xr.alloc, off: 4, n: xr.n}.Read()), ErrBounds},
		{"negative offset", 1, Buffer(Region{sess: xr.sess, alloc: xr.alloc, off: -4, n: 4}.Read()), ErrBounds},
		{"unknown allocation", 2, Buffer(Region{sess: yr.sess, alloc: 1 << 20, n: 4}.Write()), ErrArgument},
		{"invalid access", 2, Buffer(yr.Bind(Access(7))), ErrArgument},
		{"no access", 2, Buffer(yr.Bind(AccessNone)), ErrArgument},
		{"index beyond the carrier", 0, Index(1 << 31), ErrArgument},
		{"negative index beyond the carrier", 0, Index(-1<<31 - 1), ErrArgument},
		{"float for the index", 0, F32(64), ErrArgument},
		{"buffer for the index", 0, Buffer(x.Read()), ErrArgument},
		{"index for a buffer", 1, Index(0), ErrArgument},
	}
	for _, m := range mistakes {
		d.Args[m.i] = m.arg
		before := len(spy.launched)
		direct := s.Run(one)
		general := s.Run([]Command{d, Fill{Region: z.Region()}})
		if !errors.Is(direct, m.want) || direct == nil || general == nil || direct.Error() != general.Error() {
			t.Errorf("%s: direct run %v, general run %v; want both %v, alike", m.name, direct, general, m.want)
		}
		if !strings.HasPrefix(fmt.Sprint(direct), "run: command 0: ") {
			t.Errorf("%s: %v does not name the command", m.name, direct)
		}
		if len(spy.launched) != before {
			t.Errorf("%s: a refused run launched", m.name)
		}
		copy(d.Args, good)
		if err := s.Run(one); err != nil {
			t.Fatalf("%s: valid run after the refusal: %v", m.name, err)
		}
		got := spy.launched[len(spy.launched)-1]
		want := []launchArg{{Bits: 64, Size: 4},
			{Buffer: true, Mem: s.allocs[xr.alloc].mem, N: xr.n},
			{Buffer: true, Mem: s.allocs[yr.alloc].mem, N: yr.n}}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: the next valid run launched %+v, want %+v", m.name, got, want)
		}
	}
	// A different shape or kernel in the same Dispatch value is checked
	// afresh too.
	d.WorkgroupSize = [3]int{64, 1, 1}
	if err := s.Run([]Command{&d}); !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), "compiled with") {
		t.Errorf("changed workgroup size: %v", err)
	}
	d.WorkgroupSize, d.Kernel = [3]int{32, 1, 1}, p.nop
	if err := s.Run([]Command{&d}); !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), "3 arguments") {
		t.Errorf("changed kernel: %v", err)
	}
	if got := must(ReadSlice(s, y)); got[0] != 9 || got[63] != 9 {
		t.Errorf("square of 3 read back %v, %v", got[0], got[63])
	}
}

// TestPackArgsAgreesWithArgError: packArgs refuses an argument list
// exactly when argError, the plain one-check-at-a-time form that words
// the errors, finds a mistake, and then with argError's message for the
// first wrong argument. Random argument lists mix valid and invalid
// regions, accesses, kinds and scalar values.
func TestPackArgsAgreesWithArgError(t *testing.T) {
	s := testSession(t)
	other := testSession(t)
	k := fakeKernel(s, "mix",
		ParamInfo{Name: "n", Type: "index", Bytes: 4},
		ParamInfo{Name: "o", Type: "offset", Bytes: 4},
		ParamInfo{Name: "q", Type: "offset", Bytes: 8},
		ParamInfo{Name: "f", Type: "f32", Bytes: 4},
		bufParam("src", AccessRead), bufParam("dst", AccessWrite), bufParam("acc", AccessReadWrite), bufParam("idle", AccessNone))
	r := must(s.Allocate(64))
	w := must(s.Weight(make([]byte, 64)))
	foreign := must(other.Allocate(64))
	regions := []Region{r, slice(t, r, 8, 16), slice(t, r, 64, 0), w, foreign, {},
		{sess: r.sess, alloc: r.alloc, off: 60, n: 8}, {sess: r.sess, alloc: r.alloc, off: -1, n: 1},
		{sess: r.sess, alloc: r.alloc, off: 0, n: -1}, {sess: r.sess, alloc: 99, n: 1}}
	scalars := []Arg{Index(5), Index(-1), Index(1 << 31), Index(-1 << 31), Index(-1<<31 - 1), Offset(1<<32 - 1), Offset(1 << 32),
		Offset(1 << 63), F32(1), I32(1), I64(1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	ck := s.kernels[k.id]
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]launchArg, len(ck.kinds))
	refused := 0
	for range 20000 {
		args := make([]Arg, len(ck.kinds))
		for i, kind := range ck.kinds {
			// Mostly right, so later arguments get checked too.
			switch {
			case rng.IntN(3) > 0 && kind == argBuffer:
				args[i] = Buffer(r.Bind(ck.info.Params[i].Access | Access(rng.IntN(4))))
			case rng.IntN(3) > 0 && kind != argBuffer:
				args[i] = Arg{kind: kind, val: uint64(rng.IntN(100))}
			case rng.IntN(2) == 0:
				args[i] = Buffer(regions[rng.IntN(len(regions))].Bind(Access(rng.IntN(5))))
			default:
				args[i] = scalars[rng.IntN(len(scalars))]
			}
		}
		var want error
		for i := range args {
			if e := s.argError(ck, args, i); !strings.Contains(e.Error(), "internal error") {
				want = e
				break
			}
		}
		_, got := s.packArgs(ck, args, out, nil, false)
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("args %v: packArgs says %v, argError %v", args, got, want)
		}
		if got != nil {
			refused++
		}
	}
	if refused < 1000 || refused > 19000 {
		t.Fatalf("%d of 20000 refused: the mix does not exercise both sides", refused)
	}
}

// TestDirectRunConcurrent runs one kernel directly from several goroutines
// at once, each on its own buffers: the kernel's reused launch is shared
// under the session lock, so every goroutine must read back its own
// squares (and -race must stay quiet).
func TestDirectRunConcurrent(t *testing.T) {
	s := testSession(t)
	p := newPipeline(t, s)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			errs <- func() error {
				x, err := Alloc[float32](s, 64)
				if err != nil {
					return err
				}
				y, err := Alloc[float32](s, 64)
				if err != nil {
					return err
				}
				for i := range 20 {
					v := float32(g*100 + i)
					if err := Upload(s, x, slices.Repeat([]float32{v}, 64)); err != nil {
						return err
					}
					if err := s.Run([]Command{p.squareD(64, x, y)}); err != nil {
						return err
					}
					got, err := ReadSlice(s, y)
					if err != nil {
						return err
					}
					for j, e := range got {
						if e != v*v {
							return fmt.Errorf("goroutine %d step %d: y[%d] = %v, want %v", g, i, j, e, v*v)
						}
					}
				}
				return nil
			}()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestCheckShapeAgreesWithShapeError: checkShape refuses a launch shape
// exactly when shapeError finds a mistake, at and around every bound.
func TestCheckShapeAgreesWithShapeError(t *testing.T) {
	s := testSession(t)
	k := fakeKernel(s, "shape", bufParam("x", AccessRead))
	ck := s.kernels[k.id]
	counts := []int{-1, 0, 1, 7, 1<<31 - 1, 1 << 31}
	sizes := []int{0, 1, 64, 1 << 20, 1<<20 + 1}
	refused, passed := 0, 0
	for _, static := range []bool{false, true} {
		ck.info.Static, ck.info.WorkgroupSize = static, [3]int{64, 1, 1}
		for _, nargs := range []int{0, 1, 2} {
			for i := range 3 {
				for _, c := range counts {
					for _, z := range sizes {
						d := Dispatch{Kernel: k, Workgroups: [3]int{1, 1, 1}, WorkgroupSize: [3]int{64, 1, 1}, Args: make([]Arg, nargs)}
						d.Workgroups[i], d.WorkgroupSize[i] = c, z
						got, want := checkShape(ck, &d), shapeError(ck, &d)
						if strings.Contains(want.Error(), "internal error") {
							want = nil
						}
						if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
							t.Fatalf("%+v (static %v): checkShape %v, shapeError %v", d, static, got, want)
						}
						if got == nil {
							passed++
						} else {
							refused++
						}
					}
				}
			}
		}
	}
	if passed == 0 || refused == 0 {
		t.Fatalf("%d passed, %d refused: the table misses a side", passed, refused)
	}
}
