package runtime

import (
	"errors"
	"fmt"

	"github.com/loomgen/loomgen/loom/ptx"
)

// The CUDA backend compiles Loom kernels with loom/ptx. Its entry takes one
// parameter per launch argument in order, at the widths launchArg packs:
// buffers as 64-bit addresses, index 4 bytes, offset 8, i1 1, f16/bf16 2.
//
// A kernel loom/ptx does not lower fails Compile with ErrCompile naming the
// kernel and the op (with its position); the session stays usable. It does
// not move that one kernel to the CPU: the session's memory lives on the
// GPU, so a mixed session would copy every buffer the kernel touches both
// ways on each dispatch. The error says how to run it on the CPU instead.
func init() {
	ptxCompiler = func(req *kernelRequest) (compiledPTX, error) {
		k, err := ptx.Compile(req.Modules, req.Export, ptx.Options{Config: req.Config, SM: req.SM})
		if errors.Is(err, ptx.ErrUnsupported) {
			return compiledPTX{}, fmt.Errorf("%w (the CUDA backend cannot run this kernel; open the session with Backend \"cpu\" or LOOM_BACKEND=cpu to run it on the CPU executor)", err)
		}
		if err != nil {
			return compiledPTX{}, err
		}
		c := compiledPTX{text: []byte(k.PTX), capped: []byte(k.CappedPTX()), maxRegs: k.MaxRegs, entry: k.Entry, waits: k.WaitsForPredecessors}
		if k.AlignedPTX != "" {
			c.aligned, c.alignedCapped, c.alignedParams = []byte(k.AlignedPTX), []byte(k.CappedAlignedPTX()), k.AlignedParams
		}
		return c, nil
	}
}
