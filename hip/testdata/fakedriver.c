/* A stand-in for libcuda.so.1 used by the loader tests: it answers the
 * start-up calls as a configured driver would (FAKE_DEVICES, FAKE_VERSION,
 * FAKE_INIT), fails context creation with FAKE_RETAIN, and accepts launches
 * so the launch path's allocations can be counted without a GPU. The test
 * appends a stub for every other symbol the hip table names: it returns 0,
 * or 201 when the call needs a context and none is current on the thread
 * (fake_stream_stub for the stream-ordered calls). */
#include <stdlib.h>
#include <stdint.h>
#include <time.h>

/* The context current on this OS thread, as the real driver keeps it. Calls
 * that need a context fail with CUDA_ERROR_INVALID_CONTEXT (201) unless the
 * retained primary context (0x1000) is current on the calling thread, so a
 * call made without cuCtxSetCurrent on its own thread is caught. Helpers the
 * stubs call are static: several copies of this library are loaded with
 * RTLD_GLOBAL in one test binary, and an exported helper would resolve to the
 * first copy's, reading that copy's thread state. */
static __thread uintptr_t current;
static long sets;
int cuCtxSetCurrent(uintptr_t ctx) { __atomic_add_fetch(&sets, 1, __ATOMIC_RELAXED); current = ctx; return 0; }
void fake_clear_current(void) { current = 0; }
/* fake_set_count is how many times cuCtxSetCurrent was called. */
long fake_set_count(void) { return __atomic_load_n(&sets, __ATOMIC_RELAXED); }
/* fake_stub is the body of every generated context-bound stub: no current
 * context is 201; otherwise FAKE_RC_<name> (default 0) lets a test inject a
 * failure into any one call. */
static int fake_stub(const char *name) {
	char key[96] = "FAKE_RC_";
	size_t n = 8;
	if (current != 0x1000) return 201;
	while (*name && n < sizeof key - 1) key[n++] = *name++;
	key[n] = 0;
	const char *v = getenv(key);
	return v ? atoi(v) : 0;
}
#define NEED_CTX do { if (current != 0x1000) return 201; } while (0)
/* After fake_stream_context(1), stream-ordered calls behave as CUDA's do:
 * they take the context from the stream, so nothing need be current. */
static int stream_context;
void fake_stream_context(int on) { __atomic_store_n(&stream_context, on, __ATOMIC_RELAXED); }
static int stream_ok(void) {
	if (current == 0x1000) return 1;
	return current == 0 && __atomic_load_n(&stream_context, __ATOMIC_RELAXED);
}
static int fake_stream_stub(const char *name) {
	if (!stream_ok()) return 201;
	uintptr_t saved = current;
	current = 0x1000;
	int r = fake_stub(name);
	current = saved;
	return r;
}

static int env(const char *k, int def) {
	const char *v = getenv(k);
	return v ? atoi(v) : def;
}

int cuInit(unsigned flags) { (void)flags; return env("FAKE_INIT", 0); }
int cuDriverGetVersion(int *v) { *v = env("FAKE_VERSION", 13000); return 0; }
int cuDeviceGetCount(int *n) { *n = env("FAKE_DEVICES", 1); return 0; }
int cuDeviceGet(int *d, int ordinal) { *d = ordinal; return 0; }
int cuDevicePrimaryCtxRetain(uintptr_t *ctx, int dev) { (void)dev; *ctx = 0x1000; return env("FAKE_RETAIN", 0); }
/* Every attribute reads 0 but the compute capability's major number
 * (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75), FAKE_CC_MAJOR. */
int cuDeviceGetAttribute(int *v, int attr, int dev) { (void)dev; *v = attr == 75 ? env("FAKE_CC_MAJOR", 0) : 0; return 0; }
int cuGetErrorName(int code, const char **name) {
	switch (code) {
	case 2: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
	case 700: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; return 0;
	case 12345: *name = "CUDA_ERROR_FROM_THE_FUTURE"; return 0;
	}
	return 1;
}
int cuStreamCreate(uintptr_t *s, unsigned flags) { NEED_CTX; (void)flags; *s = 0x2000; return 0; }
/* Each module load gets its own handle (0x3000 + 16·n for the n-th) and its
 * function one of its own (0x4000 + the same), so a test can tell which
 * build a launch took (fake_last_function) and count loads. */
static long module_loads;
long fake_module_loads(void) { return __atomic_load_n(&module_loads, __ATOMIC_RELAXED); }
int cuModuleLoadDataEx(uintptr_t *m, const void *img, unsigned n, int *opts, void **vals) { NEED_CTX;
	(void)img; (void)n; (void)opts; (void)vals; *m = 0x3000 + 16 * __atomic_add_fetch(&module_loads, 1, __ATOMIC_RELAXED); return 0;
}
int cuModuleGetFunction(uintptr_t *f, uintptr_t m, const char *name) { NEED_CTX; (void)name; *f = m + 0x1000; return 0; }
int cuFuncGetAttribute(int *v, int attr, uintptr_t f) { NEED_CTX; (void)attr; (void)f; *v = 1; return 0; }
int cuFuncGetParamInfo(uintptr_t f, size_t i, size_t *off, size_t *size) { NEED_CTX;
	(void)f; if ((int)i >= env("FAKE_PARAMS", 2)) return 1; *off = 8 * i; *size = 8; return 0;
}
/* The last launch (any thread): grid x, block x, dynamic shared bytes and
 * the 8-byte slots of the first four parameters read, zero past those
 * (fake_last_launch copies it). */
static uint64_t last_launch[7];
void fake_last_launch(uint64_t *out) { for (int i = 0; i < 7; i++) out[i] = last_launch[i]; }
/* fake_last_function is the function handle of the last launch. */
static uint64_t last_function;
uint64_t fake_last_function(void) { return last_function; }

/* With FAKE_PARAM_SIZES set ("4,16,2": the byte sizes of the first
 * parameters, at most 8 of at most 64 bytes), a launch also keeps exactly
 * those bytes of each, packed one after another (fake_last_params copies
 * them and returns their count), so parameters of any size are seen whole. */
static uint8_t last_params[8 * 64];
static int last_params_n;
int fake_last_params(uint8_t *out) { for (int i = 0; i < last_params_n; i++) out[i] = last_params[i]; return last_params_n; }
static void record_params(void **params) {
	const char *v = getenv("FAKE_PARAM_SIZES");
	last_params_n = 0;
	for (int i = 0; v && *v && i < 8; i++) {
		char *end;
		long n = strtol(v, &end, 10);
		if (end == v || n < 0 || n > 64) return;
		for (long j = 0; j < n; j++) last_params[last_params_n++] = ((uint8_t *)params[i])[j];
		v = *end == ',' ? end + 1 : end;
	}
}

/* After fake_launch_work(spin, touch), every launch also does a driver's
 * share of work: spin rounds of dependent arithmetic and a read of touch
 * bytes (one load a cache line) of a buffer of its own, so a host-only
 * benchmark sees its caller's state evicted from the nearer caches between
 * two launches as a real driver's microseconds evict it. */
static long work_spin, work_touch;
static volatile uint8_t *work_buf;
static volatile uint64_t work_sink;
void fake_launch_work(long spin, long touch) {
	if (touch > 0 && !work_buf) work_buf = calloc(64 << 20, 1);
	work_spin = spin;
	work_touch = touch < (64 << 20) ? touch : (64 << 20);
}
static void launch_work(void) {
	uint64_t x = work_sink;
	for (long i = 0; i < work_spin; i++) x = x * 6364136223846793005u + 1442695040888963407u;
	for (long i = 0; i < work_touch; i += 64) x += work_buf[i];
	work_sink = x;
}

/* launch is cuLaunchKernel's body, static so that fake_submit reaches this
 * copy's state and not the first loaded copy's cuLaunchKernel. */
static int launch(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shared, uintptr_t stream, void **params, void **extra) {
	if (!stream_ok()) return 201;
	(void)gy; (void)gz; (void)by; (void)bz; (void)stream; (void)extra;
	if (!gx || !gy || !gz || !bx || !by || !bz || bx > 1024) return 1; /* CUDA_ERROR_INVALID_VALUE */
	last_launch[0] = gx; last_launch[1] = bx; last_launch[2] = shared;
	last_function = f;
	for (int i = 3; i < 7; i++) last_launch[i] = 0;
	/* Read the parameters the way a driver does: through the pointers (the
	 * first FAKE_READ_PARAMS of them, default 2). */
	for (int i = 0; i < env("FAKE_READ_PARAMS", 2); i++) {
		volatile uint8_t v = *(uint8_t *)params[i];
		(void)v;
		if (i < 4) last_launch[3 + i] = *(uint64_t *)params[i];
	}
	record_params(params);
	launch_work();
	return env("FAKE_LAUNCH", 0);
}

int cuLaunchKernel(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shared, uintptr_t stream, void **params, void **extra) {
	return launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

/* fake_submit is native_launch_submit (native_loop.c) against this driver:
 * n launches of f on stream from C as a C program makes them, timed on
 * CLOCK_MONOTONIC into *ns, for host-only side-by-side benchmarks. */
int fake_submit(uintptr_t f, uintptr_t stream, int n, long long *ns) {
	void *none[1] = {0};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		int r = launch(f, 1, 1, 1, 32, 1, 1, 0, stream, none, NULL);
		if (r != 0) return r;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	return 0;
}

/* fake_args11 folds its eleven arguments in order, so a caller can check
 * that each reached its place (the hot-path call frame's trampoline). */
long fake_args11(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, long a9, long a10) {
	long v[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
	unsigned long h = 17;
	for (int i = 0; i < 11; i++) h = h * 1000003u ^ (unsigned long)v[i];
	return (long)h;
}

/* Graph kernel nodes get handles of their own (0x5000 + 16·n for the n-th),
 * and the last cuGraphAddDependencies_v2 call is kept (fake_last_edge: the
 * from and to nodes of its first edge, its edge count and the first edge's
 * eight bytes of CUgraphEdgeData as one little-endian word). */
static long kernel_nodes;
#ifndef FAKE_OMIT_cuGraphAddKernelNode_v2 /* a test may drop it (fakeDriver's omit) */
int cuGraphAddKernelNode_v2(uintptr_t *node, uintptr_t g, const uintptr_t *deps, size_t n, const void *p) {
	(void)g; (void)deps; (void)n; (void)p;
	int r = fake_stub("cuGraphAddKernelNode_v2");
	if (r == 0) *node = 0x5000 + 16 * __atomic_add_fetch(&kernel_nodes, 1, __ATOMIC_RELAXED);
	return r;
}
#endif
static uint64_t last_edge[4];
void fake_last_edge(uint64_t *out) { for (int i = 0; i < 4; i++) out[i] = last_edge[i]; }
#ifndef FAKE_OMIT_cuGraphAddDependencies_v2
int cuGraphAddDependencies_v2(uintptr_t g, const uintptr_t *from, const uintptr_t *to, const unsigned char *edges, size_t n) {
	(void)g;
	int r = fake_stub("cuGraphAddDependencies_v2");
	if (r != 0) return r;
	uint64_t word = 0;
	for (int i = 7; edges && i >= 0; i--) word = word << 8 | edges[i];
	last_edge[0] = n ? from[0] : 0;
	last_edge[1] = n ? to[0] : 0;
	last_edge[2] = n;
	last_edge[3] = word;
	return 0;
}
#endif

/* cuLaunchKernelEx keeps the last config it was given (fake_last_config:
 * grid x, block x, dynamic shared bytes, stream, attribute count, the
 * first attribute's id and the first word of its value). */
static uint64_t last_config[7];
void fake_last_config(uint64_t *out) { for (int i = 0; i < 7; i++) out[i] = last_config[i]; }
struct fake_launch_config {
	unsigned grid[3], block[3], shared;
	uintptr_t stream;
	const unsigned char *attrs;
	unsigned num_attrs;
};
int cuLaunchKernelEx(const struct fake_launch_config *c, uintptr_t f, void **params, void **extra) {
	(void)f; (void)params; (void)extra;
	if (!stream_ok()) return 201;
	last_config[0] = c->grid[0];
	last_config[1] = c->block[0];
	last_config[2] = c->shared;
	last_config[3] = c->stream;
	last_config[4] = c->num_attrs;
	last_config[5] = c->num_attrs ? *(const unsigned *)c->attrs : 0;
	last_config[6] = c->num_attrs ? *(const uint64_t *)(c->attrs + 8) : 0;
	return env("FAKE_RC_cuLaunchKernelEx", 0);
}
