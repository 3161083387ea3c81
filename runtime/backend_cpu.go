package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// cpuBackend runs kernels with loom/interp on host memory. Work runs
// synchronously on submission, so every submission is trivially ordered after
// the previous one and synchronize has nothing to wait for.
type cpuBackend struct {
	workers  int
	sanitize interp.Sanitize
}

func newCPUBackend(opts Options) *cpuBackend {
	return &cpuBackend{workers: max(1, opts.Workers), sanitize: opts.Sanitize}
}

// cpuMem is a host allocation.
type cpuMem struct{ b []byte }

// cpuArgPool recycles interp argument slices across launches.
var cpuArgPool = sync.Pool{New: func() any { return new([]interp.Arg) }}

func (c *cpuBackend) name() string        { return "cpu" }
func (c *cpuBackend) target() loom.Target { return loom.TargetGPU }

func (c *cpuBackend) alloc(n int, shared bool) (devMem, error) {
	return &cpuMem{b: make([]byte, n)}, nil
}

func (c *cpuBackend) free(m devMem) error {
	m.(*cpuMem).b = nil
	return nil
}

// hostBytes reports every CPU allocation as host-visible: reads copy
// directly.
func (c *cpuBackend) hostBytes(m devMem) ([]byte, bool) { return m.(*cpuMem).b, true }

func (c *cpuBackend) upload(dst devMem, off int, data []byte) error {
	copy(dst.(*cpuMem).b[off:off+len(data)], data)
	return nil
}

func (c *cpuBackend) download(dst []byte, src devMem, off int) error {
	copy(dst, src.(*cpuMem).b[off:off+len(dst)])
	return nil
}

func (c *cpuBackend) copy(dst devMem, dstOff int, src devMem, srcOff, n int) error {
	copy(dst.(*cpuMem).b[dstOff:dstOff+n], src.(*cpuMem).b[srcOff:srcOff+n])
	return nil
}

func (c *cpuBackend) fill(dst devMem, off, n int, value uint32) error {
	b := dst.(*cpuMem).b[off : off+n]
	if len(b) == 0 {
		return nil
	}
	binary.LittleEndian.PutUint32(b, value)
	// Doubling copies fill at memmove speed.
	for done := 4; done < len(b); done *= 2 {
		copy(b[done:], b[:done])
	}
	return nil
}

func (c *cpuBackend) loadKernel(req *kernelRequest) (devKernel, error) {
	return interp.Compile(req.Modules, req.Export, interp.Options{Target: req.Target, Config: req.Config, Workers: req.Workers, Sanitize: c.sanitize})
}

func (c *cpuBackend) launch(l *launchCmd) error {
	k := l.Kernel.(*interp.Kernel)
	p := cpuArgPool.Get().(*[]interp.Arg)
	args := (*p)[:0]
	for _, a := range l.Args {
		if a.Buffer {
			args = append(args, interp.Arg{Buffer: a.Mem.(*cpuMem).b[a.Off : a.Off+a.N : a.Off+a.N]})
		} else {
			args = append(args, interp.Arg{Bits: a.Bits, Buffer: a.Lanes})
		}
	}
	err := k.Run(interp.Launch{Workgroups: l.Workgroups, WorkgroupSize: l.WorkgroupSize, WorkgroupStorage: l.WorkgroupStorage}, args)
	clear(args)
	*p = args[:0]
	cpuArgPool.Put(p)
	return err
}

// cpuGraph is a recording as a schedule: successor lists and in-degrees, so
// a replay releases each node when its last dependency finishes.
type cpuGraph struct {
	nodes []graphNode
	succ  [][]int32
	indeg []int32
	roots []int32
	// serial is set when no two nodes may ever run at once (a chain), so
	// replay skips the scheduler.
	serial bool
}

func (c *cpuBackend) buildGraph(nodes []graphNode) (devGraph, error) {
	g := &cpuGraph{nodes: nodes, succ: make([][]int32, len(nodes)), indeg: make([]int32, len(nodes))}
	serial := true
	for i, n := range nodes {
		g.indeg[i] = int32(len(n.Deps))
		if len(n.Deps) == 0 {
			g.roots = append(g.roots, int32(i))
		}
		chained := false
		for _, d := range n.Deps {
			g.succ[d] = append(g.succ[d], int32(i))
			if d == i-1 {
				chained = true
			}
		}
		if i > 0 && !chained {
			serial = false
		}
	}
	g.serial = serial || c.workers == 1
	return g, nil
}

func (c *cpuBackend) runNode(n *graphNode) error {
	if n.Fill != nil {
		return c.fill(n.Fill.Mem, n.Fill.Off, n.Fill.N, n.Fill.Value)
	}
	return c.launch(n.Launch)
}

// launchGraph runs the schedule: record order is a valid topological order,
// so a serial graph runs in it; otherwise up to workers goroutines run
// nodes as they become ready. Roots are claimed through an atomic cursor and
// a worker keeps the first successor it releases for itself, so channel
// traffic is only for extra ready nodes. The first failure stops new nodes
// from starting.
func (c *cpuBackend) launchGraph(dg devGraph) error {
	g := dg.(*cpuGraph)
	n := len(g.nodes)
	if g.serial {
		for i := range g.nodes {
			if err := c.runNode(&g.nodes[i]); err != nil {
				return fmt.Errorf("command %d: %w", i, err)
			}
		}
		return nil
	}
	remaining := make([]atomic.Int32, n)
	for i, d := range g.indeg {
		remaining[i].Store(d)
	}
	ready := make(chan int32, n)
	var (
		nextRoot atomic.Int32
		finished atomic.Int32
		failed   atomic.Bool
		errMu    sync.Mutex
		errs     []error
		wg       sync.WaitGroup
	)
	worker := func() {
		defer wg.Done()
		local := int32(-1)
		for {
			i := local
			if i < 0 {
				if k := nextRoot.Add(1) - 1; int(k) < len(g.roots) {
					i = g.roots[k]
				} else {
					var ok bool
					if i, ok = <-ready; !ok {
						return
					}
				}
			}
			if !failed.Load() {
				if err := c.runNode(&g.nodes[i]); err != nil {
					failed.Store(true)
					errMu.Lock()
					errs = append(errs, fmt.Errorf("command %d: %w", i, err))
					errMu.Unlock()
				}
			}
			// Successors are released even after a failure so every
			// node is accounted for and every worker exits.
			local = -1
			for _, s := range g.succ[i] {
				if remaining[s].Add(-1) == 0 {
					if local < 0 {
						local = s
					} else {
						ready <- s
					}
				}
			}
			if int(finished.Add(1)) == n {
				close(ready)
			}
		}
	}
	w := min(c.workers, n)
	wg.Add(w)
	for range w {
		go worker()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *cpuBackend) freeKernel(devKernel) error { return nil }

// maxWorkgroupStorage is the CPU executor's bound on dynamic workgroup
// storage (interp.Launch).
func (c *cpuBackend) maxWorkgroupStorage(devKernel) int { return 1 << 30 }
func (c *cpuBackend) freeGraph(devGraph) error          { return nil }
func (c *cpuBackend) synchronize() error                { return nil }
func (c *cpuBackend) close() error                      { return nil }
