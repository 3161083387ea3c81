// entry.cuh: what every kernel of the nvcc side begins with.
#pragma once

// entry_wait begins every kernel (kernels.cu's mat-vecs issue their prefetches first), as
// loom/ptx places it in every sm_90 entry: wait for the grids this one
// depends on programmatically (their memory visible), then let its own
// dependents be scheduled. Both are no-ops in a launch without a
// programmatic dependency.
__device__ __forceinline__ void entry_wait()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
