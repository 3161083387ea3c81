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

// touch is a dispatch of k binding bs.
func touch(k Kernel, bs ...Binding) Dispatch {
	d := Dispatch{Kernel: k, Workgroups: [3]int{1, 1, 1}, WorkgroupSize: [3]int{1, 1, 1}}
	for _, b := range bs {
		d.Args = append(d.Args, Buffer(b))
	}
	return d
}
