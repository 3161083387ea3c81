package runtime

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHazardRules is the dependency specification as a table: each row is
// one command recorded after all rows above it, with the earlier rows it
// must wait for.
func TestHazardRules(t *testing.T) {
	s := testSession(t)
	a := must(s.Allocate(256))
	b := must(s.Allocate(256))
	w := must(s.Weight(make([]byte, 64)))
	one := fakeKernel(s, "one", bufParam("x", AccessNone))
	two := fakeKernel(s, "two", bufParam("x", AccessNone), bufParam("y", AccessNone))
	rows := []struct {
		name string
		cmd  Command
		deps []int
	}{
		/* 0 */ {"write 0..64", touch(s, one, slice(t, a, 0, 64).Write()), nil},
		/* 1 */ {"read 0..32 follows the write", touch(s, one, slice(t, a, 0, 32).Read()), []int{0}},
		/* 2 */ {"read 64..96 touches nothing written", touch(s, one, slice(t, a, 64, 32).Read()), nil},
		/* 3 */ {"write 16..80 follows the writer and both readers", touch(s, one, slice(t, a, 16, 64).Write()), []int{0, 1, 2}},
		/* 4 */ {"another allocation is independent", touch(s, one, slice(t, b, 16, 64).Write()), nil},
		/* 5 */ {"read-write of fresh bytes", touch(s, one, slice(t, a, 100, 20).ReadWrite()), nil},
		/* 6 */ {"reader after read-write node", touch(s, one, slice(t, a, 100, 10).Read()), []int{5}},
		/* 7 */ {"one node reading and writing the same bytes: no self edge", touch(s, two, slice(t, a, 200, 10).Read(), slice(t, a, 200, 10).Write()), nil},
		/* 8 */ {"later reader follows it", touch(s, one, slice(t, a, 205, 1).Read()), []int{7}},
		/* 9 */ {"empty binding orders nothing", touch(s, one, slice(t, a, 20, 0).ReadWrite()), nil},
		/* 10 */ {"access none orders nothing", touch(s, one, slice(t, a, 0, 256).Bind(AccessNone)), nil},
		/* 11 */ {"adjacent bytes do not overlap", touch(s, one, slice(t, a, 96, 4).Write()), nil},
		/* 12 */ {"write over several segments follows every writer and reader", touch(s, one, slice(t, a, 0, 128).Write()), []int{0, 1, 2, 3, 5, 6, 11}},
		/* 13 */ {"fill is a write", Fill{Region: slice(t, a, 64, 8)}, []int{12}},
		/* 14 */ {"weights order nothing", touch(s, one, w.Read()), nil},
		/* 15 */ {"read across fill and write", touch(s, one, slice(t, a, 60, 8).Read()), []int{12, 13}},
		/* 16 */ {"write after write follows only the last writer", touch(s, one, slice(t, b, 16, 8).Write()), []int{4}},
		/* 17 */ {"second write, same bytes", touch(s, one, slice(t, b, 16, 8).Write()), []int{16}},
	}
	cmds := make([]Command, len(rows))
	for i, r := range rows {
		cmds[i] = r.cmd
	}
	if err := s.Record("rules", cmds); err != nil {
		t.Fatal(err)
	}
	g := must(s.Graph("rules"))
	for i, r := range rows {
		if got := g.Nodes[i].Deps; !slices.Equal(got, r.deps) && !(len(got) == 0 && len(r.deps) == 0) {
			t.Errorf("%d %s: deps %v, want %v", i, r.name, got, r.deps)
		}
	}
	if !g.DependsOn(3, 0) || g.DependsOn(0, 3) {
		t.Errorf("DependsOn disagrees with Deps")
	}
	nEdges := 0
	for _, n := range g.Nodes {
		nEdges += len(n.Deps)
	}
	if len(g.Edges) != nEdges {
		t.Errorf("%d edges for %d deps", len(g.Edges), nEdges)
	}
}

// refHazards is the brute-force reference: per byte, the last writer and
// the readers since.
type refHazards struct {
	writer  map[[2]int]int
	readers map[[2]int][]int
}

func (r *refHazards) add(n int, spans []span) []int {
	deps := map[int]bool{}
	for _, sp := range spans {
		if sp.acc == AccessNone {
			continue
		}
		for x := sp.off; x < sp.off+sp.n; x++ {
			k := [2]int{int(sp.alloc), x}
			if w, ok := r.writer[k]; ok {
				deps[w] = true
			}
			if sp.acc.Writes() {
				for _, rd := range r.readers[k] {
					deps[rd] = true
				}
			}
		}
	}
	for _, sp := range spans {
		if sp.acc.Reads() {
			for x := sp.off; x < sp.off+sp.n; x++ {
				k := [2]int{int(sp.alloc), x}
				r.readers[k] = append(r.readers[k], n)
			}
		}
	}
	for _, sp := range spans {
		if sp.acc.Writes() {
			for x := sp.off; x < sp.off+sp.n; x++ {
				k := [2]int{int(sp.alloc), x}
				r.writer[k] = n
				r.readers[k] = nil
			}
		}
	}
	delete(deps, n)
	out := make([]int, 0, len(deps))
	for d := range deps {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func randomSpans(rng *rand.Rand, allocs, size int) []span {
	spans := make([]span, 1+rng.IntN(3))
	for i := range spans {
		off := rng.IntN(size + 1)
		n := rng.IntN(size - off + 1)
		if rng.IntN(4) == 0 {
			n = rng.IntN(min(4, size-off) + 1) // short spans make many boundaries
		}
		spans[i] = span{alloc: uint32(rng.IntN(allocs)), off: off, n: n, acc: Access(rng.IntN(4))}
	}
	return spans
}

// TestHazardRandomAgainstReference compares the segment tracker with the
// byte-set reference over random command streams, and checks the segment
// invariants (sorted, disjoint, non-empty) after every command.
func TestHazardRandomAgainstReference(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var h hazardTracker
		ref := &refHazards{writer: map[[2]int]int{}, readers: map[[2]int][]int{}}
		for n := range 300 {
			spans := randomSpans(rng, 3, 48)
			got := h.add(int32(n), spans, nil)
			gi := make([]int, len(got))
			for i, d := range got {
				gi[i] = int(d)
			}
			slices.Sort(gi)
			want := ref.add(n, spans)
			if !slices.Equal(gi, want) && !(len(gi) == 0 && len(want) == 0) {
				t.Fatalf("seed %d node %d spans %v: deps %v, want %v", seed, n, spans, gi, want)
			}
			for a, segs := range h.allocs {
				for i, sg := range segs {
					if sg.start >= sg.end || (i > 0 && segs[i-1].end > sg.start) {
						t.Fatalf("seed %d node %d alloc %d: bad segments %v", seed, n, a, segs)
					}
				}
			}
		}
	}
}

// TestRecordMatchesReference runs random streams through Record and the
// reference, comparing Graph's edges.
func TestRecordMatchesReference(t *testing.T) {
	s := testSession(t)
	regions := []Region{must(s.Allocate(40)), must(s.Allocate(40))}
	k := fakeKernel(s, "k", bufParam("a", AccessNone), bufParam("b", AccessNone), bufParam("c", AccessNone))
	rng := rand.New(rand.NewPCG(3, 4))
	ref := &refHazards{writer: map[[2]int]int{}, readers: map[[2]int][]int{}}
	var cmds []Command
	var want [][]int
	for n := range 200 {
		spans := randomSpans(rng, 2, 40)
		for len(spans) < 3 {
			spans = append(spans, span{alloc: 0, acc: AccessRead})
		}
		spans = spans[:3]
		var bs []Binding
		for _, sp := range spans {
			bs = append(bs, slice(t, regions[sp.alloc], sp.off, sp.n).Bind(sp.acc))
		}
		// Region allocation ids match their index in regions.
		cmds = append(cmds, touch(s, k, bs...))
		want = append(want, ref.add(n, spans))
	}
	if err := s.Record("random", cmds); err != nil {
		t.Fatal(err)
	}
	g := must(s.Graph("random"))
	for i := range cmds {
		if got := g.Nodes[i].Deps; !slices.Equal(got, want[i]) && !(len(got) == 0 && len(want[i]) == 0) {
			t.Fatalf("node %d: deps %v, want %v", i, got, want[i])
		}
	}
}

// BenchmarkRecord records a realistic mix: a transformer-like step over
// per-layer activations, a KV cache sliced per layer and position, weights,
// and fills of scratch, at three sizes to show growth.
func BenchmarkRecord(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := testSession(b)
			const layers = 32
			act := [2]Region{must(s.Allocate(1 << 20)), must(s.Allocate(1 << 20))}
			kv := must(s.Allocate(layers * 64 << 10))
			scratch := must(s.Allocate(256 << 10))
			w := must(s.Weight(make([]byte, layers*1024)))
			k3 := fakeKernel(s, "matmul", bufParam("x", AccessRead), bufParam("w", AccessRead), bufParam("y", AccessWrite))
			k2 := fakeKernel(s, "norm", bufParam("x", AccessReadWrite), bufParam("s", AccessWrite))
			cmds := make([]Command, 0, n)
			for i := 0; len(cmds) < n; i++ {
				layer := i % layers
				src, dst := act[i%2], act[(i+1)%2]
				kvs := slice(b, kv, layer*64<<10+(i%64)*1024, 1024)
				ws := slice(b, w, layer*1024, 1024)
				switch i % 4 {
				case 0:
					cmds = append(cmds, touch(s, k3, src.Read(), ws.Read(), dst.Write()))
				case 1:
					cmds = append(cmds, touch(s, k2, dst.ReadWrite(), slice(b, scratch, (i%256)*1024, 1024).Write()))
				case 2:
					cmds = append(cmds, touch(s, k3, dst.Read(), ws.Read(), kvs.Write()))
				case 3:
					cmds = append(cmds, Fill{Region: slice(b, scratch, (i%128)*2048, 2048)})
				}
			}
			b.ResetTimer()
			for i := range b.N {
				if err := s.Record(fmt.Sprint(i), cmds); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/cmd")
		})
	}
}
