package runtime

import (
	"fmt"
)

// recording is one recorded graph: its checked, packed nodes with inferred
// dependencies, and the backend's executable form.
type recording struct {
	key   string
	nodes []graphNode
	// bindings[bstart[i]:bstart[i+1]] are node i's bindings, for Graph.
	bindings []Binding
	bstart   []int
	dev      devGraph
}

// GraphInfo describes a recording for tests and tools.
type GraphInfo struct {
	Key   string
	Nodes []NodeInfo
	// Edges lists every dependency as {from, to}: node to waits for node
	// from. Sorted by to, then from's position in to's Deps.
	Edges [][2]int
}

// NodeInfo is one recorded command.
type NodeInfo struct {
	// Kind is "dispatch" or "fill".
	Kind string
	// Kernel is the export name of a dispatch's kernel.
	Kernel string
	// Bindings are the regions the command touches, with their access.
	Bindings []Binding
	// Deps are the earlier nodes this one waits for, in ascending order.
	Deps []int
}

// DependsOn reports whether node to waits directly for node from.
func (g *GraphInfo) DependsOn(to, from int) bool {
	if to < 0 || to >= len(g.Nodes) {
		return false
	}
	for _, d := range g.Nodes[to].Deps {
		if d == from {
			return true
		}
	}
	return false
}

// Record checks every command, infers the dependencies between them and
// stores the result under key for Replay. Keys are unique. A check error
// (bad region, foreign handle, weight written, duplicate key, empty graph)
// leaves the session usable and records nothing; a backend failure while
// building the device graph is a device failure like any other and makes
// the session unusable.
func (s *Session) Record(key string, cmds []Command) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	if _, dup := s.graphs[key]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateKey, key)
	}
	if len(cmds) == 0 {
		return fmt.Errorf("%w: %q has no commands", ErrEmptyGraph, key)
	}
	rec := &recording{key: key, nodes: make([]graphNode, len(cmds)), bstart: make([]int, len(cmds)+1)}
	var h hazardTracker
	p := newPreparer(s, cmds)
	rec.bindings = make([]Binding, 0, p.maxBindings)
	// Dependencies of all nodes live in one block, so recording 100,000
	// commands does not make 100,000 small allocations.
	deps := make([]int32, 0, 2*len(cmds))
	starts := make([]int, len(cmds)+1)
	for i, c := range cmds {
		node, err := p.prepare(c)
		if err != nil {
			return fmt.Errorf("record %q: command %d: %w", key, i, err)
		}
		rec.nodes[i] = node
		rec.bstart[i] = len(rec.bindings)
		rec.bindings = appendBindings(rec.bindings, c)
		starts[i] = len(deps)
		deps = h.add(int32(i), p.spans, deps)
		sortInt32(deps[starts[i]:])
	}
	starts[len(cmds)] = len(deps)
	rec.bstart[len(cmds)] = len(rec.bindings)
	flat := make([]int, len(deps))
	for i, d := range deps {
		flat[i] = int(d)
	}
	for i := range rec.nodes {
		rec.nodes[i].Deps = flat[starts[i]:starts[i+1]:starts[i+1]]
	}
	g, err := s.be.buildGraph(rec.nodes)
	if err != nil {
		return s.fail(fmt.Sprintf("record %q: build graph", key), err)
	}
	rec.dev = g
	s.graphs[key] = rec
	return nil
}

// appendBindings appends the regions command c touches.
func appendBindings(bs []Binding, c Command) []Binding {
	switch c := c.(type) {
	case Fill:
		return append(bs, c.Region.Write())
	case *Fill:
		return append(bs, c.Region.Write())
	case Dispatch:
		return appendDispatchBindings(bs, &c)
	case *Dispatch:
		return appendDispatchBindings(bs, c)
	}
	return bs
}

func appendDispatchBindings(bs []Binding, d *Dispatch) []Binding {
	if d == nil || d.p == nil {
		return bs
	}
	for _, a := range d.p.args {
		if a.kind == argBuffer {
			bs = append(bs, a.binding)
		}
	}
	return bs
}

// sortInt32 sorts a short list in place (dependency lists are short).
func sortInt32(a []int32) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// IsRecorded reports whether key names a recording.
func (s *Session) IsRecorded(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.graphs[key]
	return ok && !s.closed
}

// Graph describes the recording under key: its nodes and inferred edges.
func (s *Session) Graph(key string) (*GraphInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	rec, ok := s.graphs[key]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotRecorded, key)
	}
	g := &GraphInfo{Key: key, Nodes: make([]NodeInfo, len(rec.nodes))}
	for i, node := range rec.nodes {
		n := NodeInfo{
			Kind:     "fill",
			Bindings: append([]Binding(nil), rec.bindings[rec.bstart[i]:rec.bstart[i+1]]...),
			Deps:     append([]int(nil), node.Deps...),
		}
		if node.Launch != nil {
			n.Kind, n.Kernel = "dispatch", node.Launch.Name
		}
		g.Nodes[i] = n
		for _, d := range n.Deps {
			g.Edges = append(g.Edges, [2]int{d, i})
		}
	}
	return g, nil
}

// Replay submits the recording under key. Like every submission it is
// ordered after earlier work; Read and Synchronize wait for it.
func (s *Session) Replay(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	rec, ok := s.graphs[key]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotRecorded, key)
	}
	if err := s.be.launchGraph(rec.dev); err != nil {
		return s.fail(fmt.Sprintf("replay %q", key), err)
	}
	return nil
}

// Run checks every command and then issues them directly, one after another,
// without a graph. A check failure runs nothing and leaves the session
// usable; a backend failure makes it unusable.
func (s *Session) Run(cmds []Command) error {
	// One dispatch, the common direct call, skips the preparer: it needs
	// no node list, no spans and no per-run scratch, and this function
	// stays small (a launch evicts its code from the nearer caches).
	if len(cmds) == 1 {
		switch c := cmds[0].(type) {
		case Dispatch:
			return s.runDispatch(&c)
		case *Dispatch:
			if c != nil {
				return s.runDispatch(c)
			}
		}
	}
	return s.runCommands(cmds)
}

// runCommands is Run of anything but one dispatch.
func (s *Session) runCommands(cmds []Command) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	p := &s.run
	p.reset(s, cmds)
	nodes := reuse(s.runNodes, len(cmds))[:len(cmds)]
	s.runNodes = nodes
	defer func() { // keep no kernel or memory reachable from the scratch
		clear(nodes)
		p.drop()
	}()
	for i, c := range cmds {
		var err error
		if nodes[i], err = p.prepare(c); err != nil {
			return fmt.Errorf("run: command %d: %w", i, err)
		}
	}
	for i := range nodes {
		if err := s.issue(nodes, i); err != nil {
			return s.fail(fmt.Sprintf("run: command %d", i), err)
		}
	}
	return nil
}

// runDispatch is Run of the single dispatch d: the same checks, in the same
// order, with the same errors as the general path. NewDispatch checked and
// packed everything else, so what is left is the dispatch's session: a
// lock, one comparison and the packed launch, with everything else out of
// line in runDispatchSlow.
func (s *Session) runDispatch(d *Dispatch) error {
	s.mu.Lock()
	// NewDispatch resolved the handle in its session, whose kernels stay
	// until Close: the session id is all there is left to compare (s.id is
	// never 0, the zero Kernel's is).
	sd := d.p
	if s.closed || s.failure != nil || sd == nil || sd.kernel.sess != s.id || sd.packed == nil {
		return s.runDispatchSlow(d)
	}
	// Not deferred: a packed launch and runFailed do not panic (the slow
	// path, which runs backends' own launches, defers).
	err := sd.packed.Launch()
	if err != nil {
		err = s.runFailed(err)
	}
	s.mu.Unlock()
	return err
}

// runDispatchSlow is runDispatch of an unusable session, a refused
// dispatch, or a backend that packs no launches; the caller holds s.mu,
// which this releases.
//
//go:noinline
func (s *Session) runDispatchSlow(d *Dispatch) error {
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	sd := d.p
	if sd == nil || sd.kernel.sess != s.id {
		return s.runRefused(d)
	}
	if err := s.be.launch(&sd.launch); err != nil {
		return s.runFailed(err)
	}
	return nil
}

// runRefused is the error of a direct Run whose dispatch was refused (a
// refusal takes s.kernel for the words); the caller holds s.mu.
func (s *Session) runRefused(d *Dispatch) error {
	err := zeroDispatch
	if d.p != nil {
		if _, err = s.kernel(d.p.kernel); err == nil { // the comparisons and s.kernel disagree: a bug
			err = fmt.Errorf("%w: kernel handle refused without a reason (internal error)", ErrArgument)
		}
	}
	return fmt.Errorf("run: command 0: %w", err)
}

// runFailed marks the session unusable after a direct Run's launch failed;
// the caller holds s.mu.
//
//go:noinline
func (s *Session) runFailed(err error) error { return s.fail("run: command 0", err) }

// issue submits node i of nodes directly, after nodes[:i]; the caller
// holds s.mu. A launch right after a launch may overlap the end of its
// predecessor where the backend can (dependentLauncher).
func (s *Session) issue(nodes []graphNode, i int) error {
	n := &nodes[i]
	if n.Fill != nil {
		return s.be.fill(n.Fill.Mem, n.Fill.Off, n.Fill.N, n.Fill.Value)
	}
	if i > 0 && nodes[i-1].Launch != nil {
		if dl, ok := s.be.(dependentLauncher); ok {
			return dl.launchDependent(n.Launch)
		}
	}
	return s.be.launch(n.Launch)
}
