/* A stand-in for libcuda.so.1 used by the loader tests: it answers the
 * start-up calls as a configured driver would (FAKE_DEVICES, FAKE_VERSION,
 * FAKE_INIT), fails context creation with FAKE_RETAIN, and accepts launches
 * so the launch path's allocations can be counted without a GPU. The test
 * appends a stub returning 0 for every other symbol the hip table names. */
#include <stdlib.h>
#include <stdint.h>

static int env(const char *k, int def) {
	const char *v = getenv(k);
	return v ? atoi(v) : def;
}

int cuInit(unsigned flags) { (void)flags; return env("FAKE_INIT", 0); }
int cuDriverGetVersion(int *v) { *v = env("FAKE_VERSION", 13000); return 0; }
int cuDeviceGetCount(int *n) { *n = env("FAKE_DEVICES", 1); return 0; }
int cuDeviceGet(int *d, int ordinal) { *d = ordinal; return 0; }
int cuDevicePrimaryCtxRetain(uintptr_t *ctx, int dev) { (void)dev; *ctx = 0x1000; return env("FAKE_RETAIN", 0); }
int cuGetErrorName(int code, const char **name) {
	switch (code) {
	case 2: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
	case 700: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; return 0;
	case 12345: *name = "CUDA_ERROR_FROM_THE_FUTURE"; return 0;
	}
	return 1;
}
int cuStreamCreate(uintptr_t *s, unsigned flags) { (void)flags; *s = 0x2000; return 0; }
int cuModuleLoadDataEx(uintptr_t *m, const void *img, unsigned n, int *opts, void **vals) {
	(void)img; (void)n; (void)opts; (void)vals; *m = 0x3000; return 0;
}
int cuModuleGetFunction(uintptr_t *f, uintptr_t m, const char *name) { (void)m; (void)name; *f = 0x4000; return 0; }
int cuFuncGetAttribute(int *v, int attr, uintptr_t f) { (void)attr; (void)f; *v = 1; return 0; }
int cuFuncGetParamInfo(uintptr_t f, size_t i, size_t *off, size_t *size) {
	(void)f; if (i >= 2) return 1; *off = 8 * i; *size = 8; return 0;
}
int cuLaunchKernel(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shared, uintptr_t stream, void **params, void **extra) {
	(void)f; (void)gx; (void)gy; (void)gz; (void)by; (void)bz; (void)shared; (void)stream; (void)extra;
	if (bx > 1024) return 1;
	/* Read the parameters the way a driver does: through the pointers. */
	volatile uint64_t a = *(uint64_t *)params[0], b = *(uint64_t *)params[1];
	(void)a; (void)b;
	return env("FAKE_LAUNCH", 0);
}
