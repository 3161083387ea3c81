// Command ptxtime times one kernel entry of several PTX builds side by
// side on the same inputs, for compiler work: did a change to loom/ptx
// make a kernel faster, and does it still compute the same bits?
//
//	ptxtime -entry NAME -grid X,Y,Z -block X,Y,Z -p SPEC... A.ptx B.ptx...
//
// A source ending in .loom is compiled here with loom/ptx (the kernel
// exported as NAME) and stands for the builds the runtime may load of it:
// its self-versioning PTX ("FILE.loom (versioned)") and, where it has one,
// its build for aligned buffers ("FILE.loom (aligned)"), each with the
// .maxnreg-capped alternative internal/ptxload weighs, as the runtime
// loads them. Every buffer is a device allocation, so the aligned build
// is legal for the inputs.
//
// Each SPEC is a kernel parameter, in order: i32:V (a 4-byte scalar;
// index parameters are 4 bytes), i64:V (8 bytes) or buf:BYTES (a device
// buffer filled with pseudo-random f32 words in [-1, 1), the same for
// every build). Every build gets its own copy of every buffer. Each build
// is loaded through internal/ptxload (as the runtime loads PTX), launched
// once, and its buffers are compared byte for byte with the first
// build's; then -rounds rounds, after three untimed ones, each launch
// -n times per build between two events, the order rotating every round.
// A source written PATH@BYTES launches with BYTES (at most 48 KiB) of
// dynamic workgroup memory that the kernel does not use, fewer workgroups
// to an SM: it tells an occupancy effect from a code one.
//
// It prints each build's registers and local bytes, whether its buffers
// equal the first build's, and the nearest-rank median time per launch
// with the ratio first ÷ this (above 1: this build is faster). It needs
// no Go toolchain on the GPU machine: build it with CGO_ENABLED=0.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/ptxload"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/ptx"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ptxtime:", err)
		os.Exit(1)
	}
}

// param is one kernel parameter of the command line.
type param struct {
	size  int    // bytes in the parameter buffer: 4 or 8
	value uint64 // a scalar's bits
	init  []byte // a buffer's initial contents (nil for scalars)
}

// parseParam reads one SPEC; index is its position (it seeds a buffer).
func parseParam(spec string, index int) (param, error) {
	kind, v, ok := strings.Cut(spec, ":")
	if !ok {
		return param{}, fmt.Errorf("parameter %d %q: want i32:V, i64:V or buf:BYTES", index, spec)
	}
	switch kind {
	case "i32", "i64":
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil {
			return param{}, fmt.Errorf("parameter %d %q: %v", index, spec, err)
		}
		if kind == "i32" {
			if n < math.MinInt32 || n > math.MaxUint32 {
				return param{}, fmt.Errorf("parameter %d %q: out of 32-bit range", index, spec)
			}
			return param{size: 4, value: uint64(uint32(n))}, nil
		}
		return param{size: 8, value: uint64(n)}, nil
	case "buf":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return param{}, fmt.Errorf("parameter %d %q: want a positive byte count", index, spec)
		}
		return param{size: 8, init: fill(n, uint32(12345+index))}, nil
	}
	return param{}, fmt.Errorf("parameter %d %q: unknown kind %q", index, spec, kind)
}

// fill returns n bytes of pseudo-random f32 words in [-1, 1) (a tail
// shorter than a word stays zero).
func fill(n int, seed uint32) []byte {
	b := make([]byte, n)
	x := seed
	for i := 0; i+4 <= n; i += 4 {
		x = x*1664525 + 1013904223
		f := float32(int32(x>>8)%(1<<20)) / float32(1<<20)
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits(f))
	}
	return b
}

// parseDim reads X[,Y[,Z]] (missing axes are 1).
func parseDim(what, s string) (hip.Dim3, error) {
	f := strings.Split(s, ",")
	if len(f) > 3 {
		return hip.Dim3{}, fmt.Errorf("-%s %q: at most three axes", what, s)
	}
	d := [3]int{1, 1, 1}
	for i, v := range f {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return hip.Dim3{}, fmt.Errorf("-%s %q: axis %d is not a positive integer", what, s, i)
		}
		d[i] = n
	}
	return hip.Dim3Of(what, d)
}

// build is one PTX file loaded, with its own buffers.
type build struct {
	path string
	fn   *hip.Function
	args *hip.Args
	// shared is the dynamic workgroup memory each launch takes.
	shared uint32
	bufs   []*hip.DeviceMemory // nil for scalars
	times  []float64
}

func run(argv []string, out io.Writer) error {
	fl := flag.NewFlagSet("ptxtime", flag.ContinueOnError)
	entry := fl.String("entry", "", "kernel entry name")
	gridS := fl.String("grid", "1", "grid X[,Y[,Z]]")
	blockS := fl.String("block", "1", "block X[,Y[,Z]]")
	rounds := fl.Int("rounds", 21, "timed rounds")
	per := fl.Int("n", 20, "launches per build per round")
	var specs []string
	fl.Func("p", "kernel parameter i32:V, i64:V or buf:BYTES (repeat, in order)", func(s string) error {
		specs = append(specs, s)
		return nil
	})
	if err := fl.Parse(argv); err != nil {
		return err
	}
	if *entry == "" || fl.NArg() == 0 {
		return errors.New("usage: ptxtime -entry NAME -grid X,Y,Z -block X,Y,Z -p SPEC... A.ptx [B.ptx...]")
	}
	if *rounds < 1 || *per < 1 {
		return errors.New("-rounds and -n must be positive")
	}
	grid, err := parseDim("grid", *gridS)
	if err != nil {
		return err
	}
	block, err := parseDim("block", *blockS)
	if err != nil {
		return err
	}
	params := make([]param, len(specs))
	sizes := make([]int, len(specs))
	for i, s := range specs {
		if params[i], err = parseParam(s, i); err != nil {
			return err
		}
		sizes[i] = params[i].size
	}
	srcs, err := sources(fl.Args(), *entry)
	if err != nil {
		return err
	}
	s, err := hip.OpenStream(hip.CUDA, 0)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := s.Context()
	defer ctx.Close()
	var builds []*build
	for _, src := range srcs {
		b, err := load(ctx, src, *entry, params, sizes)
		if err != nil {
			return err
		}
		path := src.name
		builds = append(builds, b)
		a := b.fn.Attributes()
		fmt.Fprintf(out, "%s: %d registers, %d bytes local\n", path, a.NumRegs, a.LocalSizeBytes)
	}
	var first [][]byte
	for k, b := range builds {
		if err := s.Launch(b.fn, grid, block, b.shared, b.args); err != nil {
			return fmt.Errorf("%s: %w", b.path, err)
		}
		if err := s.Synchronize(); err != nil {
			return fmt.Errorf("%s: %w", b.path, err)
		}
		var got [][]byte
		for i, m := range b.bufs {
			if m == nil {
				continue
			}
			h := make([]byte, len(params[i].init))
			if err := ctx.CopyDtoH(h, m.Ptr()); err != nil {
				return err
			}
			got = append(got, h)
		}
		if k == 0 {
			first = got
			continue
		}
		same := true
		for i := range got {
			same = same && bytes.Equal(got[i], first[i])
		}
		fmt.Fprintf(out, "%s: buffers after one launch equal %s's: %v\n", b.path, builds[0].path, same)
	}
	start, err := ctx.NewEvent()
	if err != nil {
		return err
	}
	defer start.Close()
	end, err := ctx.NewEvent()
	if err != nil {
		return err
	}
	defer end.Close()
	const warmup = 3
	for r := 0; r < warmup+*rounds; r++ {
		for k := range builds {
			b := builds[(k+r)%len(builds)]
			if err := start.Record(s); err != nil {
				return err
			}
			for range *per {
				if err := s.Launch(b.fn, grid, block, b.shared, b.args); err != nil {
					return fmt.Errorf("%s: %w", b.path, err)
				}
			}
			if err := end.Record(s); err != nil {
				return err
			}
			if err := end.Synchronize(); err != nil {
				return err
			}
			d, err := hip.Elapsed(start, end)
			if err != nil {
				return err
			}
			if r >= warmup {
				b.times = append(b.times, float64(d.Nanoseconds())/1e3/float64(*per))
			}
		}
	}
	base := median(builds[0].times)
	for _, b := range builds {
		m := median(b.times)
		fmt.Fprintf(out, "%s: median %.3f us a launch (%d rounds of %d); %s ÷ this %.4f\n", b.path, m, *rounds, *per, builds[0].path, base/m)
	}
	return nil
}

// source is one build to time: PTX text, with the capped alternative
// ptxload weighs (nil for a .ptx file, loaded as it is).
type source struct {
	name         string
	text, capped []byte
	maxRegs      int
	shared       uint32 // dynamic workgroup memory a launch takes (the @BYTES suffix)
}

// sources reads the builds named on the command line: a .ptx file is one
// build; a .loom file is compiled (export entry) into its versioned build
// and, where it has one, its aligned build.
func sources(paths []string, entry string) ([]source, error) {
	var out []source
	for _, arg := range paths {
		path, shared, err := sharedSuffix(arg)
		if err != nil {
			return nil, err
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if !strings.HasSuffix(path, ".loom") {
			out = append(out, source{name: arg, text: text, shared: shared})
			continue
		}
		mods, err := loom.ParsePackage(loom.File{Name: path, Src: text})
		if err != nil {
			return nil, err
		}
		k, err := ptx.Compile(mods, entry, ptx.Options{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, source{name: arg + " (versioned)", text: []byte(k.PTX), capped: []byte(k.CappedPTX()), maxRegs: k.MaxRegs, shared: shared})
		if k.AlignedPTX != "" {
			out = append(out, source{name: arg + " (aligned)", text: []byte(k.AlignedPTX), capped: []byte(k.CappedAlignedPTX()), maxRegs: k.MaxRegs, shared: shared})
		}
	}
	return out, nil
}

// sharedSuffix splits a source argument PATH@BYTES into the path and the
// dynamic workgroup memory its launches take (0 without the suffix): the
// memory no kernel reads lowers how many workgroups share an SM, to tell
// an occupancy effect from a code one.
func sharedSuffix(arg string) (string, uint32, error) {
	path, n, ok := strings.Cut(arg, "@")
	if !ok {
		return arg, 0, nil
	}
	v, err := strconv.ParseUint(n, 10, 32)
	if err != nil || v > 48<<10 {
		return "", 0, fmt.Errorf("source %q: the suffix after @ must be a byte count of at most 49152", arg)
	}
	return path, uint32(v), nil
}

// load loads one build and gives it its own buffers.
func load(ctx *hip.Context, src source, entry string, params []param, sizes []int) (*build, error) {
	path := src.name
	_, fn, err := ptxload.Load(ctx, src.text, src.capped, src.maxRegs, entry)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b := &build{path: path, fn: fn, args: hip.NewArgs(sizes...), shared: src.shared}
	for i, p := range params {
		if p.init == nil {
			if p.size == 4 {
				b.args.SetUint32(i, uint32(p.value))
			} else {
				b.args.SetUint64(i, p.value)
			}
			b.bufs = append(b.bufs, nil)
			continue
		}
		m, err := ctx.Alloc(len(p.init))
		if err != nil {
			return nil, err
		}
		if err := ctx.CopyHtoD(m.Ptr(), p.init); err != nil {
			return nil, err
		}
		b.args.SetPtr(i, m.Ptr())
		b.bufs = append(b.bufs, m)
	}
	if err := b.args.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// median is the nearest-rank median.
func median(x []float64) float64 {
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	return y[(len(y)-1)/2]
}
