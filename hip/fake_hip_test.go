package hip

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHIP builds a stand-in for libamdhip64.so that behaves like ROCm on a
// machine without an AMD GPU, as configured by the environment: hipInit
// returns FAKE_HIP_INIT, hipGetDeviceCount returns FAKE_HIP_COUNT_RC and
// reports FAKE_HIP_DEVICES. Every other symbol of the HIP table is a stub
// returning hipSuccess.
func fakeHIP(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake HIP library")
	}
	var b strings.Builder
	b.WriteString(`#include <stdlib.h>
static int env(const char *k, int def) { const char *v = getenv(k); return v ? atoi(v) : def; }
int hipInit(unsigned flags) { (void)flags; return env("FAKE_HIP_INIT", 0); }
int hipDriverGetVersion(int *v) { *v = 50700000; return env("FAKE_HIP_VERSION_RC", 0); }
int hipGetDeviceCount(int *n) { *n = env("FAKE_HIP_DEVICES", 0); return env("FAKE_HIP_COUNT_RC", 0); }
const char *hipGetErrorName(int code) { return code == 100 ? "hipErrorNoDevice" : 0; }
`)
	defined := map[string]bool{"hipInit": true, "hipDriverGetVersion": true, "hipGetDeviceCount": true, "hipGetErrorName": true}
	for _, names := range hipSpec.symbols {
		for _, n := range names {
			if !defined[n] {
				defined[n] = true
				fmt.Fprintf(&b, "int %s(void) { return 0; }\n", n)
			}
		}
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "fakehip.c")
	if err := os.WriteFile(c, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libamdhip64.so.5")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("building fake HIP library: %v\n%s", err, out)
	}
	return so
}

// TestFakeHIPNoDevice: a ROCm library present on a machine without an AMD
// GPU reports ErrNoDevice, naming the library, whichever start-up call
// notices first (ROCm 5 fails hipInit with hipErrorInvalidDevice, newer
// releases with hipErrorNoDevice, and some succeed at init and report no
// devices from hipGetDeviceCount or hipDriverGetVersion).
func TestFakeHIPNoDevice(t *testing.T) {
	so := fakeHIP(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"init invalid device", map[string]string{"FAKE_HIP_INIT": "101"}},
		{"init no device", map[string]string{"FAKE_HIP_INIT": "100"}},
		{"count says no device", map[string]string{"FAKE_HIP_COUNT_RC": "100"}},
		{"zero devices", nil},
		{"version says no device", map[string]string{"FAKE_HIP_VERSION_RC": "100", "FAKE_HIP_DEVICES": "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := OpenPath(HIP, so)
			if !errors.Is(err, ErrNoDevice) || !strings.Contains(err.Error(), so) {
				t.Fatalf("got %v, want ErrNoDevice naming %s", err, so)
			}
			if errors.Is(err, ErrOldDriver) || errors.Is(err, ErrMissingSymbol) {
				t.Fatalf("no-device error also claims another class: %v", err)
			}
		})
	}
	// Through Open, with no NVIDIA driver: the no-device answer wins over
	// the missing CUDA library and says what was tried.
	t.Setenv("FAKE_HIP_INIT", "101")
	t.Setenv("LOOM_CUDA_LIB", "/nonexistent/libcuda.so.1")
	t.Setenv("LOOM_HIP_LIB", so)
	_, err := Open()
	if !errors.Is(err, ErrNoDevice) || !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Fatalf("Open: got %v, want ErrNoDevice that also names the CUDA attempt", err)
	}
}
