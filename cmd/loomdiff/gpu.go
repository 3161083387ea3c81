package main

import (
	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/crosscheck"
	"github.com/loomgen/loomgen/loom/ptx"
)

// device is an open CUDA stream on GPU 0 (and its context).
type device struct{ s *hip.Stream }

func openDevice() (*device, error) {
	s, err := hip.OpenStream(hip.CUDA, 0)
	if err != nil {
		return nil, err
	}
	return &device{s: s}, nil
}

// run launches k on c's inputs and returns every buffer after the run; an
// error wrapping crosscheck.ErrDeviceFault means the context may be lost.
func (d *device) run(k *ptx.Kernel, c *crosscheck.Case) ([][]byte, error) {
	e := crosscheck.Entry{PTX: k.PTX, Name: k.Entry}
	for _, p := range k.Params {
		e.ParamSizes = append(e.ParamSizes, p.Size)
		e.Buffers = append(e.Buffers, p.Buffer)
	}
	return crosscheck.RunPTX(d.s.Context(), d.s, e, c.Args, c.Launch, 0)
}
