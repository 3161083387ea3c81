package runtime

import (
	"testing"
)

// testSession opens a CPU session that the test closes on cleanup.
func testSession(t testing.TB) *Session {
	t.Helper()
	s := newSession(newCPUBackend(Options{Workers: 2}), "test", Options{Workers: 2})
	t.Cleanup(func() { s.Close() })
	return s
}

// fakeKernel registers kernel metadata without compiling anything, so the
// checks and the hazard inference of Record can be tested without Loom
// sources. Launching it is not possible (it has no backend kernel).
func fakeKernel(s *Session, name string, params ...ParamInfo) Kernel {
	ck := &compiledKernel{info: KernelInfo{Export: name, Params: params, Target: "gpu"}}
	for _, p := range params {
		k := argBuffer
		if !p.Buffer {
			for i, n := range argKindNames {
				if n == p.Type {
					k = argKind(i)
				}
			}
		}
		ck.kinds = append(ck.kinds, k)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kernels = append(s.kernels, ck)
	return Kernel{sess: s.id, id: int32(len(s.kernels) - 1)}
}

// bufParam is a buffer parameter whose body access is acc.
func bufParam(name string, acc Access) ParamInfo {
	return ParamInfo{Name: name, Type: "buffer", Buffer: true, Access: acc}
}

// must unwraps a setup result; setup failures abort the test binary with
// the error, which is enough for steps that are not under test.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func slice(t testing.TB, r Region, off, n int) Region {
	t.Helper()
	return must(r.Slice(off, n))
}

// touch is a dispatch of k binding bs, for kernels made by fakeKernel,
// which have no launch config NewDispatch could evaluate.
func touch(s *Session, k Kernel, bs ...Binding) Dispatch {
	args := make([]Arg, len(bs))
	for i, b := range bs {
		args[i] = Buffer(b)
	}
	return rawDispatch(s, k, [3]int{1, 1, 1}, [3]int{1, 1, 1}, args...)
}

// rawDispatch seals a dispatch of k with the given geometry after only
// packArgs's checks (panicking on a refusal): the back door tests use to
// reach what NewDispatch rules out, such as an execution that overruns a
// buffer, or kernels without a launch config.
func rawDispatch(s *Session, k Kernel, grid, size [3]int, args ...Arg) Dispatch {
	sd := &sealedDispatch{kernel: k, args: args, launch: launchCmd{Workgroups: grid, WorkgroupSize: size}}
	s.mu.Lock()
	defer s.mu.Unlock()
	ck := must(s.kernel(k))
	sd.launch.Kernel, sd.launch.Name = ck.dev, ck.info.Export
	sd.launch.Args = make([]launchArg, len(args))
	sd.spans = must(s.packArgs(ck, args, sd.launch.Args, nil, true))
	return Dispatch{p: sd}
}

// newDispatch is s.NewDispatch that fails the test on error.
func newDispatch(t testing.TB, s *Session, k Kernel, workload []Arg, args ...Arg) Dispatch {
	t.Helper()
	d, err := s.NewDispatch(k, workload, args)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
