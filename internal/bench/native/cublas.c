// cuBLAS baseline for loombench, built on the device into a shared
// library (nvcc -shared ... -lcublas) and called through purego: times
// cublasSgemm on row-major operands with its own events on the legacy
// stream of the primary context, the context loombench's driver calls use.
#include <cublas_v2.h>
#include <cuda_runtime.h>

static cublasHandle_t handle;
static cudaEvent_t start, stop;

// bench_cublas_init creates the handle and events; 0 on success.
int bench_cublas_init(void)
{
    if (cudaSetDevice(0) != cudaSuccess)
        return 1;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
        return 2;
    if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess)
        return 3;
    return 0;
}

// bench_cublas_sgemm computes row-major C (m x n) = A (m x k) · B (k x n)
// iters times and writes the mean microseconds per call to *us; 0 on
// success. Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
int bench_cublas_sgemm(int m, int n, int k, unsigned long long a, unsigned long long b, unsigned long long c, int iters, float *us)
{
    const float one = 1.0f, zero = 0.0f;
    if (cudaEventRecord(start, 0) != cudaSuccess)
        return 10;
    for (int i = 0; i < iters; i++) {
        cublasStatus_t s = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one,
                                       (const float *)b, n, (const float *)a, k, &zero, (float *)c, n);
        if (s != CUBLAS_STATUS_SUCCESS)
            return 100 + (int)s;
    }
    if (cudaEventRecord(stop, 0) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess)
        return 11;
    float ms = 0;
    if (cudaEventElapsedTime(&ms, start, stop) != cudaSuccess)
        return 12;
    *us = ms * 1000.0f / (float)iters;
    return 0;
}
