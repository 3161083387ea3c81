// bench_native: the C baseline for hip's benchmarks, through the same
// driver API calls. Build on the device: nvcc -O2 -o /tmp/bn bench_native.c -lcuda
// Usage: bn kernels.ptx [launches [graph_launches]]
// Prints per-launch and per-node times in the units the Go benchmarks report.
//
// Both sides must time the same amount of work: how long a run of graph
// launches is changes its per-node figure (once the driver's queue is full,
// each launch waits for room and the device can run dry between waits), so
// graph_launches here pairs with -test.benchtime=<graph_launches>x for
// BenchmarkGraphReplay, and launches with -test.benchtime=<launches>x for
// the launch benchmarks. testdata/benchcmp.sh runs the pairs interleaved.
// launches 0 skips the direct launches.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *n_ = "?"; \
	cuGetErrorName(r_, &n_); fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, n_); exit(1); } } while (0)

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static char *slurp(const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) { perror(path); exit(1); }
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc(n + 1);
	if (fread(b, 1, n, f) != (size_t)n) { perror("read"); exit(1); }
	b[n] = 0;
	fclose(f);
	return b;
}

static void graph_bench(CUfunction fn, CUstream s, int nodes, int launches) {
	CUgraph g;
	CK(cuGraphCreate(&g, 0));
	CUgraphNode prev = NULL;
	for (int i = 0; i < nodes; i++) {
		CUDA_KERNEL_NODE_PARAMS p = {0};
		p.func = fn;
		p.gridDimX = p.gridDimY = p.gridDimZ = 1;
		p.blockDimX = 32; p.blockDimY = p.blockDimZ = 1;
		void *none[1] = {0};
		p.kernelParams = none;
		CUgraphNode n;
		CK(cuGraphAddKernelNode(&n, g, prev ? &prev : NULL, prev ? 1 : 0, &p));
		prev = n;
	}
	CUgraphExec e;
	CK(cuGraphInstantiateWithFlags(&e, g, 0));
	for (int i = 0; i < 10; i++) CK(cuGraphLaunch(e, s));
	CK(cuStreamSynchronize(s));
	double t0 = now_ns();
	for (int i = 0; i < launches; i++) CK(cuGraphLaunch(e, s));
	double sub = now_ns() - t0;
	CK(cuStreamSynchronize(s));
	double dt = now_ns() - t0;
	printf("native graph nodes=%d launches=%d: %.1f ns/launch %.1f ns/node %.1f submit-ns/node\n",
		nodes, launches, dt / launches, dt / launches / nodes, sub / launches / nodes);
	CK(cuGraphExecDestroy(e));
	CK(cuGraphDestroy(g));
}

int main(int argc, char **argv) {
	if (argc < 2) { fprintf(stderr, "usage: %s kernels.ptx [launches]\n", argv[0]); return 2; }
	int launches = argc > 2 ? atoi(argv[2]) : 100000;
	int glaunches = argc > 3 ? atoi(argv[3]) : 2000;
	CK(cuInit(0));
	CUdevice dev;
	CK(cuDeviceGet(&dev, 0));
	CUcontext ctx;
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CUmodule mod;
	CK(cuModuleLoadData(&mod, slurp(argv[1])));
	CUfunction fn;
	CK(cuModuleGetFunction(&fn, mod, "empty"));
	CUstream s;
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	void *none[1] = {0};
	for (int i = 0; i < 1000; i++) CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, none, NULL));
	CK(cuStreamSynchronize(s));
	for (int rep = 0; launches > 0 && rep < 3; rep++) {
		double t0 = now_ns();
		for (int i = 0; i < launches; i++) CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, none, NULL));
		CK(cuStreamSynchronize(s));
		printf("native launch empty: %.1f ns/launch\n", (now_ns() - t0) / launches);
	}
	for (int rep = 0; launches > 0 && rep < 3; rep++) {
		double t = 0;
		for (int i = 0; i < launches; i += 256) {
			double t0 = now_ns();
			for (int j = 0; j < 256; j++) CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, none, NULL));
			t += now_ns() - t0;
			CK(cuStreamSynchronize(s));
		}
		printf("native launch submit: %.1f ns/launch\n", t / ((launches + 255) / 256 * 256));
	}
	graph_bench(fn, s, 1, glaunches);
	graph_bench(fn, s, 100, glaunches);
	graph_bench(fn, s, 1000, glaunches);
	return 0;
}
