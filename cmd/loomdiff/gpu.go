package main

import (
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

// run launches k on c's inputs and returns every buffer after the run; an
// error wrapping crosscheck.ErrDeviceFault means the context may be lost.
func (d *device) run(k *ptx.Kernel, c *crosscheck.Case) ([][]byte, error) {
	e := crosscheck.Entry{PTX: k.PTX, Name: k.Entry}
	for _, p := range k.Params {
		e.ParamSizes = append(e.ParamSizes, p.Size)
		e.Buffers = append(e.Buffers, p.Buffer)
	}
	return crosscheck.RunPTX(d.ctx, d.s, e, c.Args, c.Launch, 0)
}
