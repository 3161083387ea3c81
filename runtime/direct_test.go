package runtime

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
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

// TestNewDispatchRefusesArgumentMistakes: every argument mistake is
// refused when the dispatch is made, with the sentinel that names its
// class, and launches nothing; a sealed dispatch shares nothing with the
// slices it was made from or hands out, so changing them afterwards
// changes nothing it launches.
func TestNewDispatchRefusesArgumentMistakes(t *testing.T) {
	spy := &spyBackend{cpuBackend: newCPUBackend(Options{Workers: 1})}
	s := newSession(spy, "test", Options{Workers: 1})
	t.Cleanup(func() { s.Close() })
	other := testSession(t)
	p := newPipeline(t, s)
	x := must(Alloc[float32](s, 64))
	y := must(Alloc[float32](s, 64))
	w := must(Weights(s, make([]float32, 64)))
	foreign := must(Alloc[float32](other, 64))
	if err := Upload(s, x, slices.Repeat([]float32{3}, 64)); err != nil {
		t.Fatal(err)
	}
	xr, yr := x.Region(), y.Region()
	good := []Arg{Index(64), Buffer(x.Read()), Buffer(y.Write())}
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
		{"source shorter than the views", 1, Buffer(must(xr.Slice(0, 128)).Read()), ErrArgument},
		{"launch n disagrees with workload n", 0, Index(32), ErrArgument},
	}
	for _, m := range mistakes {
		args := slices.Clone(good)
		args[m.i] = m.arg
		_, err := s.NewDispatch(p.square, []Arg{Index(64)}, args)
		if !errors.Is(err, m.want) || !strings.Contains(fmt.Sprint(err), "kernel square") {
			t.Errorf("%s: %v, want %v naming the kernel", m.name, err, m.want)
		}
	}
	if len(spy.launched) != 0 {
		t.Errorf("refused dispatches launched %d times", len(spy.launched))
	}
	args := slices.Clone(good)
	d := newDispatch(t, s, p.square, []Arg{Index(64)}, args...)
	args[2] = Buffer(x.Write()) // the caller's slice, after sealing
	d.Args()[1] = Buffer(y.Read())
	if err := s.Run([]Command{d}); err != nil {
		t.Fatal(err)
	}
	want := []launchArg{{Bits: 64, Size: 4},
		{Buffer: true, Mem: s.allocs[xr.alloc].mem, N: xr.n},
		{Buffer: true, Mem: s.allocs[yr.alloc].mem, N: yr.n}}
	if got := spy.launched[len(spy.launched)-1]; !reflect.DeepEqual(got, want) {
		t.Fatalf("launched %+v, want %+v", got, want)
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
