package interp

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/loomgen/loomgen/loom"
)

// batchesRun counts batches run, for tests to see the batched form used.
var batchesRun atomic.Int64

// batchLanes is the lane count a batch of workgroups aims at: enough to
// amortize each instruction's dispatch, few enough that the registers stay
// in cache.
var batchLanes = 2048

// wgBatchLanes is batchLanes for kernels with workgroup memory. Their
// batches pay per workgroup and per step only for the ops that run a
// block per group (batchwg.go), and most lane registers stay unwritten,
// so more groups per batch amortize more (tree reduction, 256-lane
// groups: 8 groups 34, 16 groups 30, 32 groups 26 ms here).
var wgBatchLanes = 8192

// wgBatchBytes bounds the workgroup memory of one batched frame: Run
// takes fewer groups per batch for kernels with large tiles.
const wgBatchBytes = 4 << 20

// batchBytes bounds the varying registers of one batched frame.
const batchBytes = 4 << 20

// laneBytes is the register storage one lane of a frame needs.
func (k *Kernel) laneBytes() int {
	n := 0
	for _, s := range k.slots {
		if !s.uni {
			n += s.comps * 8
			if s.kind == kView {
				n += s.comps * int(unsafe.Sizeof(view{}))
			}
		}
	}
	return n
}

// noRerun, set by tests, reports a failed batch's own error instead of
// running its workgroups again one by one (Run).
var noRerun bool

// groupBatchLanes is the largest workgroup Run batches when the kernel
// has barriers or collectives. Their cost is per lane (a reduction walks
// its lanes batched or not), and a batch loses the lane facts of the
// work-item id (it repeats per workgroup), so larger groups ran slower
// batched (BenchmarkBatchedGroups: block_max at 128 lanes, the strided
// reduction at 256), while 8 to 32 lanes gained a little.
const groupBatchLanes = 32

// batchPays reports whether Run batches workgroups of L lanes. Kernels
// with workgroup memory are batched only where their batched form keeps
// lane facts for every workgroup-memory access (batchwg.go): otherwise
// each access runs lane by lane, which costs more than it saves.
func (k *Kernel) batchPays(L int) bool {
	if len(k.allocas) > 0 {
		return k.batch.wgFast
	}
	return !k.groupOps || L <= groupBatchLanes
}

// batchGroups, when above 1, fixes the workgroups per batch (tests).
var batchGroups = 0

// groupCoord is coordinate ax of the workgroup with linear index g.
func groupCoord(l *Launch, g, ax int) int {
	switch ax {
	case 0:
		return g % l.Workgroups[0]
	case 1:
		return g / l.Workgroups[0] % l.Workgroups[1]
	}
	return g / (l.Workgroups[0] * l.Workgroups[1])
}

// batchedGroupID is kernel.workgroup.id in the batched form: lane i
// belongs to workgroup wgLin + i/grp.
func (c *compiler) batchedGroupID(b *block, op *loom.Op, ax int) (instr, error) {
	r, err := c.result(b, op, 0, false)
	if err != nil {
		return nil, err
	}
	// Its uses may read it only where they need it (lazy.go, grpc).
	r.aff = true
	c.lazyCandidate(r, op)
	return func(fr *frame) error {
		l := &fr.r.launch
		if r.lazyAff {
			m := &fr.meta[r.idx]
			m.aff, m.per, m.rng = false, false, false
			m.grpc, m.gax, m.unwritten = true, int8(ax), true
			return nil
		}
		out := fr.I[r.idx][:fr.L]
		for g := 0; g*fr.grp < len(out); g++ {
			v := int64(groupCoord(l, fr.wgLin+g, ax))
			seg := out[g*fr.grp : min((g+1)*fr.grp, len(out))]
			for i := range seg {
				seg[i] = v
			}
		}
		return nil
	}, nil
}

// batchedDispatchID is kernel.workitem.dispatch.id in the batched form.
// Along x, one-dimensional workgroups that are neighbours in one row make
// the ids of the whole batch lane-affine. Run has checked that no id
// exceeds the index carrier.
func batchedDispatchID(op *loom.Op, r *slot, ax int) instr {
	r.aff = ax == 0
	return func(fr *frame) error {
		l := &fr.r.launch
		sz := int64(l.WorkgroupSize[ax])
		out := fr.I[r.idx][:fr.L]
		grp := fr.grp
		if r.aff {
			m := &fr.meta[r.idx]
			m.aff, m.unwritten = false, false
			wx := l.Workgroups[0]
			if grp == l.WorkgroupSize[0] && fr.wgLin%wx+fr.L/grp <= wx {
				a0 := int64(fr.wgLin%wx) * sz
				m.aff, m.alo, m.ahi, m.a0 = true, 0, fr.L, a0
				if r.lazyAff {
					// Every use reads the meta (lazy.go).
					m.unwritten = true
					return nil
				}
				for i := range out {
					out[i] = a0 + int64(i)
				}
				return nil
			}
		}
		lid := fr.r.lid[ax]
		for g := 0; g*grp < len(out); g++ {
			base := int64(groupCoord(l, fr.wgLin+g, ax)) * sz
			lo, hi := g*grp, min((g+1)*grp, len(out))
			seg, ls := out[lo:hi], lid[lo:hi]
			for i := range seg {
				seg[i] = base + ls[i]
			}
		}
		return nil
	}
}

// lidCache keeps the per-lane work-item id tables of the last geometry, so
// repeated dispatches do not rebuild them; tables are read-only once made.
type lidCache struct {
	mu   sync.Mutex
	size [3]int
	n    int
	lid  [3][]int64
}

// get returns the tables for n lanes of workgroups of the given size (lane
// i is work-item i mod the workgroup's lanes, linearized x fastest).
func (c *lidCache) get(size [3]int, n int) [3][]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size == size && c.n == n && c.lid[0] != nil {
		return c.lid
	}
	var lid [3][]int64
	sx, sy := size[0], size[1]
	L := size[0] * size[1] * size[2]
	for ax := range lid {
		lid[ax] = make([]int64, n)
	}
	for i := 0; i < n; i++ {
		j := i % L
		lid[0][i] = int64(j % sx)
		lid[1][i] = int64(j / sx % sy)
		lid[2][i] = int64(j / (sx * sy))
	}
	c.size, c.n, c.lid = size, n, lid
	return lid
}
