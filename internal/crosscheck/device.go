package crosscheck

import (
	"errors"
	"fmt"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/loom/interp"
)

// ErrDeviceFault marks a failed launch, run or readback: the context may
// be lost (CUDA's sticky errors), so a caller running more kernels should
// start a fresh one.
var ErrDeviceFault = errors.New("crosscheck: device fault")

// Entry is what RunPTX needs of a compiled kernel (loom/ptx.Kernel): its
// module text, entry name, and per launch parameter the .param size and
// whether it is a buffer (a 64-bit address).
type Entry struct {
	PTX, Name  string
	ParamSizes []int
	Buffers    []bool
}

// RunPTX loads e through the driver's JIT, launches it on s over args
// (buffers copied to device allocations, each starting off bytes in, as a
// runtime sub-region may) with geometry l, and returns every buffer after
// the run (nil for scalars). A JIT refusal is an ordinary error; a failed
// launch, run or readback wraps ErrDeviceFault.
func RunPTX(ctx *hip.Context, s *hip.Stream, e Entry, args []interp.Arg, l interp.Launch, off int) ([][]byte, error) {
	if len(e.ParamSizes) != len(args) || len(e.Buffers) != len(args) {
		return nil, fmt.Errorf("the PTX entry has %d parameters, the launch %d", len(e.ParamSizes), len(args))
	}
	// The geometry first: a zero size is the launch's fault, not the
	// device's.
	grid, err := hip.Dim3Of("grid", l.Workgroups)
	if err != nil {
		return nil, err
	}
	block, err := hip.Dim3Of("block", l.WorkgroupSize)
	if err != nil {
		return nil, err
	}
	mod, err := ctx.LoadModule([]byte(e.PTX))
	if err != nil {
		return nil, fmt.Errorf("JIT: %w", err)
	}
	defer mod.Close()
	fn, err := mod.Function(e.Name)
	if err != nil {
		return nil, err
	}
	a := hip.NewArgs(e.ParamSizes...)
	mems := make([]*hip.DeviceMemory, len(args))
	defer func() {
		for _, m := range mems {
			if m != nil {
				m.Close()
			}
		}
	}()
	for j, arg := range args {
		switch size := e.ParamSizes[j]; {
		case e.Buffers[j]:
			m, err := ctx.Alloc(max(len(arg.Buffer), 1) + off)
			if err != nil {
				return nil, err
			}
			mems[j] = m
			if err := s.CopyHtoD(m.Ptr()+hip.DevicePtr(off), arg.Buffer); err != nil {
				return nil, err
			}
			a.SetPtr(j, m.Ptr()+hip.DevicePtr(off))
		case arg.Buffer != nil: // a vector parameter's lanes
			a.SetBytes(j, arg.Buffer)
		case size == 8:
			a.SetUint64(j, arg.Bits)
		case size == 4:
			a.SetUint32(j, uint32(arg.Bits))
		default:
			b := make([]byte, size)
			for q := range b {
				b[q] = byte(arg.Bits >> (8 * q))
			}
			a.SetBytes(j, b)
		}
	}
	if n := l.WorkgroupStorage; n > 0 {
		// Past 48 KiB a kernel must opt in to its dynamic storage.
		if err := fn.SetMaxDynamicSharedBytes(n); err != nil {
			return nil, err
		}
	}
	if err := s.Launch(fn, grid, block, uint32(l.WorkgroupStorage), a); err != nil {
		return nil, fmt.Errorf("%w: launch: %w", ErrDeviceFault, err)
	}
	if err := s.Synchronize(); err != nil {
		return nil, fmt.Errorf("%w: run: %w", ErrDeviceFault, err)
	}
	out := make([][]byte, len(args))
	for j, m := range mems {
		if m == nil {
			continue
		}
		out[j] = make([]byte, len(args[j].Buffer))
		if err := s.CopyDtoH(out[j], m.Ptr()+hip.DevicePtr(off)); err != nil {
			return nil, fmt.Errorf("%w: readback: %w", ErrDeviceFault, err)
		}
	}
	// The copies are queued: out is valid once the stream has passed them.
	if err := s.Synchronize(); err != nil {
		return nil, fmt.Errorf("%w: readback: %w", ErrDeviceFault, err)
	}
	return out, nil
}
