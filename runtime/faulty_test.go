package runtime

import (
	"errors"
	"sync"
)

// faultyBackend wraps the CPU backend to inject failures, hide host
// visibility (forcing staged readback) and log the order of submissions.
type faultyBackend struct {
	*cpuBackend
	mu       sync.Mutex
	failOn   string // "upload", "download", "fill", "launchGraph", "buildGraph", "synchronize"
	noHost   bool
	syncs    int
	log      []string
	logFills bool
	// freed counts released allocations, kernels and graphs, so tests can
	// check that Close releases everything.
	freedMem, freedKernels, freedGraphs int
}

var errInjected = errors.New("injected device fault")

func (f *faultyBackend) fault(op string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failOn == op {
		return errInjected
	}
	return nil
}

func (f *faultyBackend) note(s string) {
	f.mu.Lock()
	f.log = append(f.log, s)
	f.mu.Unlock()
}

func (f *faultyBackend) hostBytes(m devMem) ([]byte, bool) {
	if f.noHost {
		return nil, false
	}
	return f.cpuBackend.hostBytes(m)
}

func (f *faultyBackend) upload(dst devMem, off int, data []byte) error {
	if err := f.fault("upload"); err != nil {
		return err
	}
	return f.cpuBackend.upload(dst, off, data)
}

func (f *faultyBackend) download(dst []byte, src devMem, off int) error {
	if err := f.fault("download"); err != nil {
		return err
	}
	return f.cpuBackend.download(dst, src, off)
}

func (f *faultyBackend) fill(dst devMem, off, n int, v uint32) error {
	if err := f.fault("fill"); err != nil {
		return err
	}
	if f.logFills {
		f.note("direct")
	}
	return f.cpuBackend.fill(dst, off, n, v)
}

func (f *faultyBackend) launchGraph(g devGraph) error {
	if err := f.fault("launchGraph"); err != nil {
		return err
	}
	f.note("graph")
	// The graph's own fills go through cpuBackend.fill, not the logging
	// wrapper, so only direct fills log "direct".
	return f.cpuBackend.launchGraph(g)
}

func (f *faultyBackend) buildGraph(nodes []graphNode) (devGraph, error) {
	if err := f.fault("buildGraph"); err != nil {
		return nil, err
	}
	return f.cpuBackend.buildGraph(nodes)
}

func (f *faultyBackend) free(m devMem) error {
	f.mu.Lock()
	f.freedMem++
	f.mu.Unlock()
	return f.cpuBackend.free(m)
}

func (f *faultyBackend) freeKernel(k devKernel) error {
	f.mu.Lock()
	f.freedKernels++
	f.mu.Unlock()
	return f.cpuBackend.freeKernel(k)
}

func (f *faultyBackend) freeGraph(g devGraph) error {
	f.mu.Lock()
	f.freedGraphs++
	f.mu.Unlock()
	return f.cpuBackend.freeGraph(g)
}

func (f *faultyBackend) synchronize() error {
	f.mu.Lock()
	f.syncs++
	f.mu.Unlock()
	if err := f.fault("synchronize"); err != nil {
		return err
	}
	return nil
}

func faultySession(workers int) (*Session, *faultyBackend) {
	fb := &faultyBackend{cpuBackend: newCPUBackend(Options{Workers: workers})}
	return newSession(fb, "test", Options{Workers: workers}), fb
}
