package runtime

import (
	"fmt"
)

// recording is one recorded graph: its checked, packed nodes with inferred
// dependencies, and the backend's executable form.
type recording struct {
	key   string
	nodes []graphNode
	info  []NodeInfo
	dev   devGraph
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
// stores the result under key for Replay. Keys are unique. A record error
// leaves the session usable and records nothing.
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
	rec := &recording{key: key, nodes: make([]graphNode, len(cmds)), info: make([]NodeInfo, len(cmds))}
	var h hazardTracker
	var spans []span
	// Dependencies of all nodes live in one block, so recording 100,000
	// commands does not make 100,000 small allocations.
	deps := make([]int32, 0, 2*len(cmds))
	starts := make([]int, len(cmds)+1)
	for i, c := range cmds {
		var err error
		var node graphNode
		node, spans, err = s.prepare(c, fmt.Sprintf("record %q: command %d", key, i), spans[:0])
		if err != nil {
			return err
		}
		rec.nodes[i] = node
		rec.info[i] = describe(c, node)
		starts[i] = len(deps)
		deps = h.add(int32(i), spans, deps)
		sortInt32(deps[starts[i]:])
	}
	starts[len(cmds)] = len(deps)
	flat := make([]int, len(deps))
	for i, d := range deps {
		flat[i] = int(d)
	}
	for i := range rec.nodes {
		d := flat[starts[i]:starts[i+1]:starts[i+1]]
		rec.nodes[i].Deps = d
		rec.info[i].Deps = d
	}
	g, err := s.be.buildGraph(rec.nodes)
	if err != nil {
		return fmt.Errorf("%w: record %q: build graph: %w", ErrDevice, key, err)
	}
	rec.dev = g
	s.graphs[key] = rec
	return nil
}

// describe renders a command for GraphInfo.
func describe(c Command, n graphNode) NodeInfo {
	if n.Fill != nil {
		var f Fill
		switch c := c.(type) {
		case Fill:
			f = c
		case *Fill:
			f = *c
		}
		return NodeInfo{Kind: "fill", Bindings: []Binding{f.Region.Write()}}
	}
	var d Dispatch
	switch c := c.(type) {
	case Dispatch:
		d = c
	case *Dispatch:
		d = *c
	}
	var bs []Binding
	for _, a := range d.Args {
		if b, ok := a.Binding(); ok {
			bs = append(bs, b)
		}
	}
	return NodeInfo{Kind: "dispatch", Kernel: n.Launch.Name, Bindings: bs}
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
	g := &GraphInfo{Key: key, Nodes: make([]NodeInfo, len(rec.info))}
	for i, n := range rec.info {
		n.Bindings = append([]Binding(nil), n.Bindings...)
		n.Deps = append([]int(nil), n.Deps...)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	nodes := make([]graphNode, len(cmds))
	var spans []span
	for i, c := range cmds {
		var err error
		nodes[i], spans, err = s.prepare(c, fmt.Sprintf("run: command %d", i), spans[:0])
		if err != nil {
			return err
		}
	}
	for i := range nodes {
		if err := s.issue(&nodes[i]); err != nil {
			return s.fail(fmt.Sprintf("run: command %d", i), err)
		}
	}
	return nil
}

// issue submits one node directly; the caller holds s.mu.
func (s *Session) issue(n *graphNode) error {
	if n.Fill != nil {
		return s.be.fill(n.Fill.Mem, n.Fill.Off, n.Fill.N, n.Fill.Value)
	}
	return s.be.launch(n.Launch)
}
