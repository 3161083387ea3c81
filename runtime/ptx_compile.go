package runtime

import "github.com/loomgen/loomgen/loom/ptx"

// The CUDA backend compiles Loom kernels with loom/ptx. Its entry takes one
// parameter per launch argument in order, at the widths launchArg packs:
// buffers as 64-bit addresses, index 4 bytes, offset 8, i1 1, f16/bf16 2.
func init() {
	ptxCompiler = func(req *kernelRequest) ([]byte, string, error) {
		k, err := ptx.Compile(req.Modules, req.Export, ptx.Options{Config: req.Config})
		if err != nil {
			return nil, "", err
		}
		return []byte(k.PTX), k.Entry, nil
	}
}
