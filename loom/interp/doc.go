// Package interp is loomgen's CPU executor: it runs Loom kernel bodies on
// host memory, so the generated bindings work on a machine without a GPU and
// every kernel can be tested in CI.
//
// Compile turns one kernel (looked up by export name among a set of parsed
// modules) into a compact internal form: every SSA value becomes a register
// slot, every op a closure that executes over all lanes (work-items) of a
// workgroup in lockstep, under an active mask for divergent control flow.
// Values that are provably the same on every lane (constants, config values,
// workgroup ids, arithmetic on those) live in one-element uniform slots and
// are computed once. Function calls are inlined and template applications
// resolved to their provider at Compile; an op outside the supported subset is
// refused there, with its position, never at run time.
//
// Lane loops run only over the bound [lo, hi) of the active lanes, so
// narrowing control flow (tails, tree reductions) costs what it keeps.
// Producers of lane-affine indices (work-item ids along x of a 1-D
// workgroup, plus uniform values) record that at run time; a load or store
// at such an index is then one contiguous block with one bounds check, and
// a comparison of it with a uniform bound is a lane interval that scf.if
// turns into a mask without looking at lanes (affine.go). Kernels also
// have a batched form that runs several workgroups as one batch of lanes,
// which amortizes each instruction's dispatch (batch.go); barriers and
// collectives there act on each workgroup's lanes (groups.go), and such
// kernels are batched only when they read no buffer they write, so that a
// failed batch can run its groups again alone and report the lowest
// failing group's error (rerun.go). Workgroup memory in a batch is one
// block per group, checked per group; the work-item id is then periodic
// (the same lane facts in every group), a guard on it narrows every group
// to one window, and accesses, fused steps and lane-wise ops run a block
// or a window per group (batchwg.go). Run batches kernels with barriers
// or collectives only for small workgroups, and kernels with workgroup
// memory only when every access to it has that block form (the tree
// reduction), where batching pays. An affine register
// whose every use reads only those facts is not written at all unless a
// consumer falls back to its lanes (lazy.go). Adjacent f32 ops with
// single-use intermediates — load, load, arithmetic, store; a guarded load
// stored to memory — run as one block loop when their accesses are
// contiguous, and op by op otherwise (fuse.go). A comparison of an affine
// index read only by the scf.if right after it is fused with that if: the
// lane range comes from the index's facts and the regions run over it,
// under a window of read-only step masks when the range is a prefix or a
// suffix of the workgroup and no lane can exit inside (rangeif.go). f32
// loads and stores through views of rank 2 and up (tiles, matrices) compute
// each lane's offset inline, with the uniform indices folded in once
// (gather.go).
//
// Run spreads the workgroups of a launch over a bounded pool of goroutines,
// which claim runs of consecutive workgroups that shrink as the work runs
// out, so the workers finish close together. f32 block loops prefetch
// ahead across page boundaries, which the hardware prefetchers do not
// cross (fma_amd64.s).
// Every load, store and atomic is checked against its view's extents and the
// bound buffer; index arithmetic is emulated at the target's carrier width and
// an out-of-range value is an error rather than a silent wrap. A failure
// stops the workgroups after the failing one and names the kernel, the op
// position and the workgroup and workitem coordinates; the error is the
// lowest failing workgroup's (or, for a batch of a kernel that reads what
// it writes, the batch's first trap), the same for any number of workers.
package interp
