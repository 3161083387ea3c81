// Mat-vec variants of matvec_q.loom not (yet) in kernels.cu, in CUDA C++,
// on top of kernels.cu (its helpers and kernels, included whole).
// loombench builds this file; when nvcc rejects it, it builds kernels.cu
// alone, so the other kernels keep their nvcc side and these run against
// the copy rate only (a new kernel cannot take the others' nvcc
// comparisons down with it).
#include "kernels.cu"
