package runtime

import (
	"fmt"

	"github.com/loomgen/loomgen/loom"
)

// compiledKernel is a kernel compiled by one session, with the metadata
// every dispatch is checked against.
type compiledKernel struct {
	// kinds[i] is the argument kind launch parameter i accepts.
	kinds []argKind
	// vectors[i] is the layout vector parameter i takes; zero for the
	// other parameters.
	vectors []vectorParam
	info    KernelInfo
	dev     devKernel
	// maxStorage bounds a dispatch's dynamic workgroup storage: 0 for a
	// kernel without a dynamic_workgroup_storage clause, the backend's
	// limit otherwise.
	maxStorage int

	// What NewDispatch evaluates for every dispatch: the launch-config
	// formulas (nil with launchErr when they cannot be evaluated), the
	// argument predicates, the buffer extents and the workgroup-storage
	// uses.
	launchExprs *loom.LaunchExprs
	launchErr   error
	checks      []loom.ArgCheck
	extents     []loom.Extent
	storage     []loom.StorageUse
	// noalias lists the launch parameters under buffer.assume.noalias:
	// a dispatch must not bind one over another binding when either is
	// written.
	noalias []int

	// Analysis results kept for LaunchConfig.
	prog   *loom.Program
	kern   *loom.Kernel
	config map[string]loom.Const
	target loom.Target
}

// KernelInfo is what a compiled kernel exposes so generated bindings (and
// tools) can be checked against it.
type KernelInfo struct {
	// Export is the kernel's export name.
	Export string
	// Params is the launch signature in order.
	Params []ParamInfo
	// WorkgroupSize is the compiled workgroup size when Static is set: it
	// depends on no workload argument (config values are folded in).
	WorkgroupSize [3]int
	Static        bool
	// DynamicWorkgroupStorage: the launch config has a
	// dynamic_workgroup_storage clause, so dispatches may give the kernel
	// up to MaxWorkgroupStorage bytes of dynamic workgroup storage.
	DynamicWorkgroupStorage bool
	MaxWorkgroupStorage     int
	// Fingerprint is loom.Fingerprint of the compiled source.
	Fingerprint string
	// Target is the profile the kernel was compiled for.
	Target string
}

// ParamInfo describes one launch parameter of a compiled kernel.
type ParamInfo struct {
	Name string // without '%'
	Type string // Loom spelling: "buffer", "view<…>", "index", "f32", …
	// Buffer is set for buffer and view parameters.
	Buffer bool
	// Access is the access the body performs on a buffer parameter; a
	// binding must cover it.
	Access Access
	// Bytes is the carrier width of a scalar parameter on the compiled
	// target (index is 4 bytes on the GPU profile), the size of a vector
	// parameter (Lanes carriers); 0 for buffers.
	Bytes int
	// Lanes is the lane count of a vector parameter (of every dimension
	// together), 0 for the others.
	Lanes int
	// Align is the byte alignment a buffer binding's offset must have (the
	// element size of its views, loom.ParamAccess.Alignment); 1 for
	// scalars.
	Align int
}

// KernelInfo returns the compiled metadata of k.
func (s *Session) KernelInfo(k Kernel) (KernelInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return KernelInfo{}, err
	}
	ck, err := s.kernel(k)
	if err != nil {
		return KernelInfo{}, err
	}
	info := ck.info
	info.Params = append([]ParamInfo(nil), info.Params...)
	return info, nil
}

// kernel resolves k; the caller holds s.mu.
func (s *Session) kernel(k Kernel) (*compiledKernel, error) {
	if k.sess == 0 {
		return nil, fmt.Errorf("%w: zero kernel handle (was the kernel compiled?)", ErrArgument)
	}
	if k.sess != s.id {
		return nil, fmt.Errorf("%w: kernel handle of session %d used with session %d", ErrForeign, k.sess, s.id)
	}
	if k.id < 0 || int(k.id) >= len(s.kernels) {
		return nil, fmt.Errorf("%w: unknown kernel id %d", ErrArgument, k.id)
	}
	return s.kernels[k.id], nil
}

// scalarKind maps a scalar Loom type to the Arg kind that passes it and its
// carrier width on target t.
func scalarKind(ty *loom.Type, t loom.Target) (argKind, int, error) {
	switch ty.Kind {
	case loom.TypeIndex:
		return argIndex, t.IndexBits / 8, nil
	case loom.TypeOffset:
		return argOffset, t.OffsetBits / 8, nil
	case loom.TypeInt:
		switch ty.Bits {
		case 1:
			return argI1, 1, nil
		case 8:
			return argI8, 1, nil
		case 16:
			return argI16, 2, nil
		case 32:
			return argI32, 4, nil
		case 64:
			return argI64, 8, nil
		}
	case loom.TypeFloat:
		switch ty.Name {
		case "f16":
			return argF16, 2, nil
		case "bf16":
			return argBF16, 2, nil
		case "f32":
			return argF32, 4, nil
		case "f64":
			return argF64, 8, nil
		}
	case loom.TypeBuffer, loom.TypeView:
		return argBuffer, 0, nil
	}
	return argNone, 0, fmt.Errorf("launch parameters of type %s are not supported by the runtime", ty)
}
