package loom

import (
	"strings"
	"testing"
)

// asyncKernel wraps a body (between the view setup and kernel.return) in a
// kernel with a global buffer %g, two workgroup allocations %wa, %wb, the
// 16-byte views %src (of %g), %da0/%da1 (the two halves of %wa) and %db,
// and the 2×16-byte stages %ra and %rb of %wa (bytes 0–31 and 32–63).
func asyncKernel(body string) string {
	return `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%g: buffer, %p: i1, %q: index) {
  %z = index.constant 0 : offset
  %b16 = index.constant 16 : offset
  %b64 = index.constant 64 : offset
  %src = buffer.view %g[%z] : buffer -> view<16xi8>
  %wa = buffer.alloca %b64 {base_alignment = 16, memory_space = workgroup} : buffer
  %wb = buffer.alloca %b64 {base_alignment = 16, memory_space = workgroup} : buffer
  %da0 = buffer.view %wa[%z] : buffer -> view<16xi8>
  %da1 = buffer.view %wa[%b16] : buffer -> view<16xi8>
  %dq = buffer.view %wa[%q] : buffer -> view<16xi8>
  %db = buffer.view %wb[%z] : buffer -> view<16xi8>
  %b32 = index.constant 32 : offset
  %ra = buffer.view %wa[%z] : buffer -> view<2x16xi8>
  %rb = buffer.view %wa[%b32] : buffer -> view<2x16xi8>
` + body + `
  kernel.return
}
`
}

const asyncAttrs = `{cache_scope = cu, cache_temporal = regular, direction = global_to_workgroup} : view<16xi8> to view<16xi8> -> kernel.async.token`

func TestAsyncStreamLegality(t *testing.T) {
	copyTo := func(tok, dst string) string {
		return "  %" + tok + " = kernel.async.copy %src to %" + dst + " " + asyncAttrs + "\n"
	}
	group := func(g string, toks ...string) string {
		if len(toks) == 0 {
			return "  %" + g + " = kernel.async.group -> kernel.async.group\n"
		}
		ts := make([]string, len(toks))
		for i := range toks {
			toks[i], ts[i] = "%"+toks[i], "kernel.async.token"
		}
		return "  %" + g + " = kernel.async.group " + strings.Join(toks, ", ") + " : " + strings.Join(ts, ", ") + " -> kernel.async.group\n"
	}
	wait := func(g, n string) string {
		return "  kernel.async.wait %" + g + " {newer_groups = " + n + "} : kernel.async.group\n"
	}
	const c0 = "  %c0 = index.constant 0 : index\n"
	// A copy into row %q of stage %rb: a subview at a run-time offset.
	const intoRow = c0 + "  %sq = view.subview %rb[%q, %c0] : view<2x16xi8> -> view<1x16xi8>\n" +
		"  %t0 = kernel.async.copy %src to %sq {cache_scope = cu, cache_temporal = regular, direction = global_to_workgroup} : view<16xi8> to view<1x16xi8> -> kernel.async.token\n"
	cases := []struct {
		name, body, err string
	}{
		{"two stages", copyTo("t0", "da0") + group("g0", "t0") + copyTo("t1", "da1") + group("g1", "t1") + wait("g0", "1") + wait("g1", "0"), ""},
		{"only the younger waited", copyTo("t0", "da0") + group("g0", "t0") + copyTo("t1", "da1") + group("g1", "t1") + wait("g1", "0"), "group %g0 is never waited"},
		{"empty group", group("e") + wait("e", "0"), ""},
		{"other root read while pending", copyTo("t0", "da0") + group("g0", "t0") + c0 + "  %x = view.load %db[%c0] : view<16xi8> -> i8\n" + wait("g0", "0"), ""},
		{"disjoint half read while pending", copyTo("t0", "da0") + group("g0", "t0") + c0 + "  %x = view.load %da1[%c0] : view<16xi8> -> i8\n" + wait("g0", "0"), ""},
		{"read before wait", copyTo("t0", "da0") + group("g0", "t0") + c0 + "  %x = view.load %da0[%c0] : view<16xi8> -> i8\n" + wait("g0", "0"), "view.load: touches a view that may overlap an asynchronous destination"},
		{"other stage read while a run-time row is pending", intoRow + group("g0", "t0") + "  %x = view.load %ra[%c0, %c0] : view<2x16xi8> -> i8\n" + wait("g0", "0"), ""},
		{"same stage read while a run-time row is pending", intoRow + group("g0", "t0") + "  %x = view.load %rb[%c0, %c0] : view<2x16xi8> -> i8\n" + wait("g0", "0"), "may overlap an asynchronous destination"},
		{"dynamic offset may overlap", copyTo("t0", "da0") + group("g0", "t0") + c0 + "  %x = view.load %dq[%c0] : view<16xi8> -> i8\n" + wait("g0", "0"), "may overlap an asynchronous destination"},
		{"write in a nested region", copyTo("t0", "da0") + group("g0", "t0") + c0 + "  scf.if %p {\n    %v = scalar.constant 1 : i8\n    view.store %v, %da0[%c0] : i8, view<16xi8>\n  }\n" + wait("g0", "0"), "view.store: touches a view"},
		{"wrong newer_groups", copyTo("t0", "da0") + group("g0", "t0") + copyTo("t1", "da1") + group("g1", "t1") + wait("g0", "0") + wait("g1", "0"), "newer_groups = 0, but 1 younger groups are outstanding"},
		{"never waited", copyTo("t0", "da0") + group("g0", "t0"), "group %g0 is never waited"},
		{"waited twice", copyTo("t0", "da0") + group("g0", "t0") + wait("g0", "0") + wait("g0", "0"), "already completed"},
		{"completed by a younger wait", copyTo("t0", "da0") + group("g0", "t0") + group("g1") + wait("g1", "0") + wait("g0", "0"), "already completed"},
		{"token never committed", copyTo("t0", "da0"), "must be committed to exactly one kernel.async.group"},
		{"overlapping destinations in flight", copyTo("t0", "da0") + group("g0", "t0") + copyTo("t1", "da0") + group("g1", "t1") + wait("g0", "1") + wait("g1", "0"), "may overlap a destination still in flight"},
		{"same destination after the wait", copyTo("t0", "da0") + group("g0", "t0") + wait("g0", "0") + copyTo("t1", "da0") + group("g1", "t1") + wait("g1", "0"), ""},
		{"group left open in a nested block", "  scf.if %p {\n" + copyTo("t0", "da0") + group("g0", "t0") + "  }\n", "never waited"},
		{"waited in the next cfg block", copyTo("t0", "da0") + group("g0", "t0") + "  cfg.br ^next\n^next:\n" + wait("g0", "0"), "group %g0 is never waited"},
		{"a stream in each cfg block", copyTo("t0", "da0") + group("g0", "t0") + wait("g0", "0") + "  cfg.br ^next\n^next:\n" + copyTo("t1", "da0") + group("g1", "t1") + wait("g1", "0"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseFile("a.loom", []byte(asyncKernel(tc.body)))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			_, err = Lower([]*Module{m}, LowerOptions{})
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("legal stream refused: %v", err)
			case tc.err != "" && err == nil:
				t.Fatalf("illegal stream accepted, want %q", tc.err)
			case tc.err != "" && !strings.Contains(err.Error(), tc.err):
				t.Fatalf("got %v, want %q", err, tc.err)
			}
		})
	}
}

func TestAsyncTransferShapes(t *testing.T) {
	cases := []struct{ name, op, err string }{
		{"copy footprint differs", `%t = kernel.async.copy %src to %w8 {cache_scope = cu, cache_temporal = regular, direction = global_to_workgroup} : view<16xi8> to view<8xi8> -> kernel.async.token`, "differ in footprint"},
		{"gather without lane axis", `%t = kernel.async.gather %src to %w16 {cache_scope = cu, cache_temporal = regular} : view<16xi8> to view<16xi8> -> kernel.async.token`, "one leading subgroup-lane axis"},
		{"gather slot too small", `%t = kernel.async.gather %src to %slots {cache_scope = cu, cache_temporal = regular} : view<16xi8> to view<4x8xi8> -> kernel.async.token`, "fewer than the source's 16"},
		{"f8 bytes", `%t = kernel.async.copy %src to %w8f {cache_scope = cu, cache_temporal = regular, direction = global_to_workgroup} : view<16xi8> to view<16xf8E4M3> -> kernel.async.token`, "bytes move between integer and f16/bf16/f32/f64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%g: buffer) {
  %z = index.constant 0 : offset
  %b64 = index.constant 64 : offset
  %src = buffer.view %g[%z] : buffer -> view<16xi8>
  %w = buffer.alloca %b64 {base_alignment = 16, memory_space = workgroup} : buffer
  %w8 = buffer.view %w[%z] : buffer -> view<8xi8>
  %w16 = buffer.view %w[%z] : buffer -> view<16xi8>
  %w8f = buffer.view %w[%z] : buffer -> view<16xf8E4M3>
  %slots = buffer.view %w[%z] : buffer -> view<4x8xi8>
  ` + tc.op + `
  %g0 = kernel.async.group %t : kernel.async.token -> kernel.async.group
  kernel.async.wait %g0 {newer_groups = 0} : kernel.async.group
  kernel.return
}
`
			m, err := ParseFile("a.loom", []byte(src))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			_, err = Lower([]*Module{m}, LowerOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("got %v, want %q", err, tc.err)
			}
			if !strings.Contains(err.Error(), "a.loom:") {
				t.Errorf("error without a position: %v", err)
			}
		})
	}
}
