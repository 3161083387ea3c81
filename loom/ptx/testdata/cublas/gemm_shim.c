// gemm_shim: the cuBLAS side of BenchmarkTensorCoreVersusCublas, as a
// shared library with calls of few arguments (purego passes at most 15;
// cublasGemmEx takes 19). Built by cublascmp.sh with nvcc, linked
// against cuBLAS; it uses the device's primary context, as package hip does.
#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

static cublasHandle_t handle;

// shim_init creates the cuBLAS handle and binds it to stream (a CUstream).
int shim_init(void *stream) {
	cublasStatus_t st = cublasCreate(&handle);
	if (st != CUBLAS_STATUS_SUCCESS) {
		return (int)st;
	}
	return (int)cublasSetStream(handle, (cudaStream_t)stream);
}

// shim_gemm computes row-major C (m x n, f32) = A (m x k) * B (k x n) with
// A and B of f16 (bf16 = 0) or bf16 (bf16 = 1), accumulating in f32:
// the column-major product C^T = B^T A^T.
int shim_gemm(int bf16, int m, int n, int k, void *a, void *b, void *c) {
	const float one = 1.0f, zero = 0.0f;
	cudaDataType_t t = bf16 ? CUDA_R_16BF : CUDA_R_16F;
	return (int)cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one,
	                         b, t, n, a, t, k, &zero, c, CUDA_R_32F, n,
	                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

#ifdef __cplusplus
}
#endif
