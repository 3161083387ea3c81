package ptx

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHoistedLoadsPTX checks which loads of testdata/hoist_loads.loom are
// issued before the workgroup reduction's first barrier (TestGPUCorpus
// runs the three kernels against the CPU executor): the read-only epilogue
// loads move up, a load past a kernel.exit or a call that asserts and a
// load of a buffer the kernel also writes stay after it, and no load moves
// above a loop.
func TestHoistedLoadsPTX(t *testing.T) {
	for _, c := range []struct {
		export        string
		before, after []string // load instructions on each side of the first bar.sync, sorted
	}{
		{"norm_epilogue", []string{"ld.global.nc.f32", "ld.global.nc.v4.f32", "ld.global.nc.v4.f32"}, nil},
		{"norm_exit", []string{"ld.global.nc.v4.f32"}, []string{"ld.global.nc.f32", "ld.global.nc.v4.f32"}},
		{"norm_written", []string{"ld.global.nc.v4.f32", "ld.global.nc.v4.f32"}, []string{"ld.global.f32"}},
		{"norm_assert", []string{"ld.global.nc.v4.f32"}, []string{"ld.global.nc.f32", "ld.global.nc.v4.f32"}},
		{"norm_loop", []string{"ld.global.nc.f32", "ld.global.nc.f32", "ld.global.nc.v4.f32", "ld.global.nc.v4.f32"}, nil},
	} {
		text := alignedVersion(compileTestdata(t, "hoist_loads.loom", c.export))
		if text == "" {
			t.Fatalf("%s: no aligned body version", c.export)
		}
		bar := strings.Index(text, "bar.sync")
		if bar < 0 {
			t.Fatalf("%s: no barrier", c.export)
		}
		if got := loadsIn(text[:bar]); strings.Join(got, " ") != strings.Join(c.before, " ") {
			t.Errorf("%s: loads before the reduction %q, want %q", c.export, got, c.before)
		}
		if got := loadsIn(text[bar:]); strings.Join(got, " ") != strings.Join(c.after, " ") {
			t.Errorf("%s: loads after the reduction %q, want %q", c.export, got, c.after)
		}
		// The loop's load stays its only one: the three after the
		// reduction moved only as far as the loop's end.
		if loc := endforRE.FindStringIndex(text); loc != nil {
			end := loc[1]
			want := []string{"ld.global.nc.f32", "ld.global.nc.v4.f32", "ld.global.nc.v4.f32"}
			if got := loadsIn(text[end:bar]); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: loads between the loop and the reduction %q, want %q", c.export, got, want)
			}
		}
	}
}

// endforRE finds the label that ends a loop.
var endforRE = regexp.MustCompile(`(?m)^\$L_endfor_\d+:`)

// loadsIn lists the global load instructions of a PTX fragment, sorted.
func loadsIn(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], "ld.global") {
			out = append(out, f[0])
		}
	}
	slices.Sort(out)
	return out
}
