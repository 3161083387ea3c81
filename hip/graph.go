package hip

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// GraphNode is a node of a Graph, used to state dependencies.
type GraphNode uintptr

// Graph is a DAG of device work built once and instantiated for replay.
type Graph struct {
	ctx    *Context
	h      uintptr
	nodes  int
	closed atomic.Bool
}

// NewGraph creates an empty graph.
func (c *Context) NewGraph() (*Graph, error) {
	var h uintptr
	if err := c.do(fnGraphCreate, uintptr(unsafe.Pointer(&h)), 0); err != nil {
		return nil, err
	}
	return &Graph{ctx: c, h: h}, nil
}

// Len is the number of nodes added.
func (g *Graph) Len() int { return g.nodes }

// Close destroys the graph; instantiated executables stay valid.
func (g *Graph) Close() error {
	if g.closed.Swap(true) {
		return nil
	}
	if g.ctx.closed.Load() {
		return fmt.Errorf("hip: destroying graph: %w (context closed first)", ErrClosed)
	}
	return g.ctx.release(fnGraphDestroy, g.h)
}

func (g *Graph) deps(deps []GraphNode) (ptr uintptr, n uintptr, keep []uintptr) {
	if len(deps) == 0 {
		return 0, 0, nil
	}
	keep = make([]uintptr, len(deps))
	for i, d := range deps {
		keep[i] = uintptr(d)
	}
	return uintptr(unsafe.Pointer(&keep[0])), uintptr(len(keep)), keep
}

// AddKernel adds a launch of f that runs after deps. The argument values
// are copied into the graph, so a may be reused at once.
func (g *Graph) AddKernel(f *Function, grid, block Dim3, shared uint32, a *Args, deps ...GraphNode) (GraphNode, error) {
	if err := checkDims(f, grid, block); err != nil {
		return 0, err
	}
	if g.closed.Load() {
		return 0, fmt.Errorf("hip: graph: %w", ErrClosed)
	}
	if err := a.matches(f); err != nil {
		return 0, err
	}
	spec := g.ctx.lib.spec
	params := make([]uint64, (spec.kernelNodeSize+7)/8)
	pb := unsafe.Slice((*byte)(unsafe.Pointer(&params[0])), len(params)*8)
	spec.kernelNode(pb, &kernelNodeParams{
		fn: f.h, grid: grid, block: block, sharedBytes: shared,
		kernelParams: a.kernelParams(),
	})
	dp, dn, keep := g.deps(deps)
	var node uintptr
	err := g.ctx.do(fnGraphAddKernelNode, uintptr(unsafe.Pointer(&node)), g.h, dp, dn, uintptr(unsafe.Pointer(&params[0])))
	runtime.KeepAlive(keep)
	runtime.KeepAlive(a)
	if err != nil {
		return 0, fmt.Errorf("hip: graph kernel node %s: %w", f.name, err)
	}
	g.nodes++
	return GraphNode(node), nil
}

// Edge data of cuGraphAddDependencies_v2 (CUgraphEdgeData: from_port,
// to_port, type, five reserved bytes).
const (
	graphKernelNodePortProgrammatic = 1 // CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC
	graphDependencyProgrammatic     = 1 // CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC
)

// SupportsProgrammaticDependencies reports whether the driver and device
// take programmatic dependencies, between kernel nodes of a graph
// (Graph.AddProgrammaticDependency) and between launches on a stream
// (Stream.LaunchProgrammatic): an NVIDIA driver of CUDA 12.3 or newer
// (cuGraphAddDependencies_v2, cuLaunchKernelEx) and a device of compute
// capability 9.0 or newer.
func (c *Context) SupportsProgrammaticDependencies() bool {
	return c.lib.fn[fnGraphAddDependencies] != 0 && c.lib.fn[fnLaunchKernelEx] != 0 && c.programmatic()
}

// programmatic reports whether the device has programmatic dependent
// launch: compute capability 9.0 or newer.
func (c *Context) programmatic() bool { return c.ccMajor >= 9 }

// AddProgrammaticDependency makes kernel node to depend on kernel node from
// programmatically: to may be scheduled once every block of from has run
// griddepcontrol.launch_dependents (or ended), while from still runs, and
// only its griddepcontrol.wait waits for from to complete with its memory
// visible. It is correct only when to's kernel runs that wait before it
// touches memory from may write or read (loom/ptx's kernels for sm_90 wait
// at entry: ptx.Kernel.WaitsForPredecessors). The two must not already be
// connected by an edge; add to without from among its deps. A driver or
// device without programmatic dependencies is ErrNotSupported
// (SupportsProgrammaticDependencies).
func (g *Graph) AddProgrammaticDependency(from, to GraphNode) error {
	if g.closed.Load() {
		return fmt.Errorf("hip: graph: %w", ErrClosed)
	}
	if !g.ctx.SupportsProgrammaticDependencies() {
		return fmt.Errorf("%w: programmatic graph dependencies need an NVIDIA driver of CUDA 12.3 or newer and a device of compute capability 9.0 or newer", ErrNotSupported)
	}
	var edge [8]byte
	edge[0] = graphKernelNodePortProgrammatic
	edge[2] = graphDependencyProgrammatic
	f, t := uintptr(from), uintptr(to)
	err := g.ctx.do(fnGraphAddDependencies, g.h, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t)), uintptr(unsafe.Pointer(&edge[0])), 1)
	if err != nil {
		return fmt.Errorf("hip: graph programmatic dependency: %w", err)
	}
	return nil
}

// AddMemset adds a fill of count elements of elemSize bytes (1, 2 or 4) at
// dst with value, running after deps.
func (g *Graph) AddMemset(dst DevicePtr, value uint32, elemSize, count int, deps ...GraphNode) (GraphNode, error) {
	if g.closed.Load() {
		return 0, fmt.Errorf("hip: graph: %w", ErrClosed)
	}
	if elemSize != 1 && elemSize != 2 && elemSize != 4 {
		return 0, fmt.Errorf("%w: memset element size %d (want 1, 2 or 4)", ErrInvalidValue, elemSize)
	}
	if count <= 0 {
		return 0, fmt.Errorf("%w: memset of %d elements", ErrInvalidValue, count)
	}
	spec := g.ctx.lib.spec
	params := make([]uint64, (spec.memsetNodeSize+7)/8)
	pb := unsafe.Slice((*byte)(unsafe.Pointer(&params[0])), len(params)*8)
	spec.memsetNode(pb, &memsetNodeParams{dst: uintptr(dst), value: value, elementSize: uint32(elemSize), width: uint64(count)})
	dp, dn, keep := g.deps(deps)
	var node uintptr
	err := g.ctx.do(fnGraphAddMemsetNode, uintptr(unsafe.Pointer(&node)), g.h, dp, dn, uintptr(unsafe.Pointer(&params[0])), g.ctx.h)
	runtime.KeepAlive(keep)
	if err != nil {
		return 0, fmt.Errorf("hip: graph memset node: %w", err)
	}
	g.nodes++
	return GraphNode(node), nil
}

// GraphExec is an instantiated graph, launched as one unit.
type GraphExec struct {
	ctx    *Context
	h      uintptr
	nodes  int
	closed atomic.Bool
}

// Instantiate prepares the graph for launch. Later changes to g do not
// affect the executable.
func (g *Graph) Instantiate() (*GraphExec, error) {
	if g.closed.Load() {
		return nil, fmt.Errorf("hip: graph: %w", ErrClosed)
	}
	var h uintptr
	if err := g.ctx.do(fnGraphInstantiate, uintptr(unsafe.Pointer(&h)), g.h, 0); err != nil {
		return nil, fmt.Errorf("hip: instantiating a graph of %d nodes: %w", g.nodes, err)
	}
	return &GraphExec{ctx: g.ctx, h: h, nodes: g.nodes}, nil
}

// Len is the number of nodes in the executable.
func (e *GraphExec) Len() int { return e.nodes }

// Launch queues the whole graph on s. It allocates nothing on success.
func (e *GraphExec) Launch(s *Stream) error {
	if e.closed.Load() {
		return fmt.Errorf("hip: graph exec: %w", ErrClosed)
	}
	if err := s.usable(); err != nil {
		return err
	}
	if err := e.ctx.Err(); err != nil {
		return err
	}
	f := cframe{a: [11]uintptr{e.h, s.h}}
	return s.hot(fnGraphLaunch, &f)
}

// Close destroys the executable.
func (e *GraphExec) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	if e.ctx.closed.Load() {
		return fmt.Errorf("hip: destroying graph exec: %w (context closed first)", ErrClosed)
	}
	return e.ctx.release(fnGraphExecDestroy, e.h)
}
