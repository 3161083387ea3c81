// native_loop: the native side of BenchmarkVersusNative, as a shared library
// the Go benchmark loads into its own process, so both sides run on the same
// thread, context, stream and driver instance, alternating chunk by chunk.
// Build on the device (testdata/benchcmp.sh does):
//   nvcc -O2 -shared -Xcompiler -fPIC -o libnative_loop.so native_loop.c -lcuda
// Each loop makes n calls exactly as bench_native.c does, then waits for the
// stream; it returns the first failing status, or 0.
#include <cuda.h>
#include <time.h>

int native_launch_loop(CUfunction fn, CUstream s, int n) {
	void *none[1] = {0};
	for (int i = 0; i < n; i++) {
		CUresult r = cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, none, NULL);
		if (r != CUDA_SUCCESS) return r;
	}
	return cuStreamSynchronize(s);
}

// native_launch_submit makes n launches as native_launch_loop does but does
// not wait for the stream: it stores in *ns the nanoseconds from before the
// first call until the last one returned, on CLOCK_MONOTONIC (the clock Go's
// time.Since reads), so the host's cost of submitting is timed without the
// call from Go into this function and without the GPU's drain.
int native_launch_submit(CUfunction fn, CUstream s, int n, long long *ns) {
	void *none[1] = {0};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		CUresult r = cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, none, NULL);
		if (r != CUDA_SUCCESS) return r;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	return 0;
}

// native_nop and native_nop_loop measure a bare call: the loop calls
// native_nop through a volatile pointer, so the C side pays a real call too.
int native_nop(void) { return 0; }

int native_nop_loop(int n) {
	int (*volatile f)(void) = native_nop;
	int r = 0;
	for (int i = 0; i < n; i++) r |= f();
	return r;
}

int native_graph_loop(CUgraphExec e, CUstream s, int n) {
	for (int i = 0; i < n; i++) {
		CUresult r = cuGraphLaunch(e, s);
		if (r != CUDA_SUCCESS) return r;
	}
	return cuStreamSynchronize(s);
}
