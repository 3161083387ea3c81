package main

import (
	"errors"
	"fmt"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/crosscheck"
	"github.com/loomgen/loomgen/loom/ptx"
)

// device is an open CUDA context and stream on GPU 0.
type device struct {
	lib *hip.Library
	ctx *hip.Context
	s   *hip.Stream
}

func openDevice() (*device, error) {
	lib, err := hip.OpenVendor(hip.CUDA)
	if err != nil {
		return nil, err
	}
	ctx, err := lib.NewContext(0)
	if err != nil {
		return nil, err
	}
	s, err := ctx.NewStream()
	if err != nil {
		ctx.Close()
		return nil, err
	}
	return &device{lib: lib, ctx: ctx, s: s}, nil
}

// errFault marks an error after which the context is unusable: the worker
// reports the kernel and exits, and a fresh worker takes the rest.
var errFault = errors.New("device fault")

// run launches k on c's inputs and returns every buffer after the run. A
// JIT refusal is an ordinary error; a failed launch or run is wrapped in
// errFault.
func (d *device) run(k *ptx.Kernel, c *crosscheck.Case) ([][]byte, error) {
	mod, err := d.ctx.LoadModule([]byte(k.PTX))
	if err != nil {
		return nil, fmt.Errorf("JIT: %w", err)
	}
	defer mod.Close()
	fn, err := mod.Function(k.Entry)
	if err != nil {
		return nil, err
	}
	if len(k.Params) != len(c.Args) {
		return nil, fmt.Errorf("PTX entry has %d parameters, the kernel %d", len(k.Params), len(c.Args))
	}
	sizes := make([]int, len(k.Params))
	for j, p := range k.Params {
		sizes[j] = p.Size
	}
	a := hip.NewArgs(sizes...)
	mems := make([]*hip.DeviceMemory, len(c.Args))
	defer func() {
		for _, m := range mems {
			if m != nil {
				m.Close()
			}
		}
	}()
	for j, arg := range c.Args {
		switch p := k.Params[j]; {
		case p.Buffer:
			m, err := d.ctx.Alloc(max(len(arg.Buffer), 1))
			if err != nil {
				return nil, err
			}
			mems[j] = m
			if err := d.ctx.CopyHtoD(m.Ptr(), arg.Buffer); err != nil {
				return nil, err
			}
			a.SetPtr(j, m.Ptr())
		case arg.Buffer != nil: // a vector parameter's lanes
			a.SetBytes(j, arg.Buffer)
		case p.Size == 8:
			a.SetUint64(j, arg.Bits)
		case p.Size == 4:
			a.SetUint32(j, uint32(arg.Bits))
		default:
			b := make([]byte, p.Size)
			for q := range b {
				b[q] = byte(arg.Bits >> (8 * q))
			}
			a.SetBytes(j, b)
		}
	}
	if n := c.Launch.WorkgroupStorage; n > 0 {
		// Past 48 KiB a kernel must opt in to its dynamic storage.
		if err := fn.SetMaxDynamicSharedBytes(n); err != nil {
			return nil, err
		}
	}
	dim := func(v [3]int) hip.Dim3 { return hip.Dim3{X: uint32(v[0]), Y: uint32(v[1]), Z: uint32(v[2])} }
	if err := d.s.Launch(fn, dim(c.Launch.Workgroups), dim(c.Launch.WorkgroupSize), uint32(c.Launch.WorkgroupStorage), a); err != nil {
		return nil, fmt.Errorf("%w: launch: %w", errFault, err)
	}
	if err := d.s.Synchronize(); err != nil {
		return nil, fmt.Errorf("%w: run: %w", errFault, err)
	}
	out := make([][]byte, len(c.Args))
	for j, m := range mems {
		if m == nil {
			continue
		}
		out[j] = make([]byte, len(c.Args[j].Buffer))
		if err := d.ctx.CopyDtoH(out[j], m.Ptr()); err != nil {
			return nil, fmt.Errorf("%w: readback: %w", errFault, err)
		}
	}
	return out, nil
}
