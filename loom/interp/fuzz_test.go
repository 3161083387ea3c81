package interp

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// genKernel builds a small random kernel from the supported ops, driven by
// the fuzzer's bytes: index, i32 and f32 arithmetic, casts, loads, stores
// and atomics at arbitrary indices, conditionals, loops, barriers and
// collectives. Most programs fail at run time (bounds, overflow,
// division); none may panic. With perGroup set, each workgroup's views
// cover its own n elements of the buffers (workgroup g at element g*n),
// so no workgroup reads what another writes and any order of workgroups
// gives the same bytes.
func genKernel(data []byte, perGroup bool) string {
	pos := 0
	next := func() int {
		if pos >= len(data) {
			return 0
		}
		b := int(data[pos])
		pos++
		return b
	}
	var b strings.Builder
	idxs := []string{"%i", "%n", "%c0", "%c1"}
	ints := []string{"%k0"}
	flts := []string{"%f0"}
	tmp := 0
	fresh := func() string { tmp++; return fmt.Sprintf("%%t%d", tmp) }
	pick := func(s []string) string { return s[next()%len(s)] }
	b.WriteString(`  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %k0 = scalar.constant 3 : i32
  %f0 = scalar.constant 1.5 : f32
  %w4 = scalar.constant 4 : i32
`)
	at := "%z"
	if perGroup {
		b.WriteString(`  %wgx = kernel.workgroup.id<x> : index
  %gbase = index.mul %wgx, %n : index
  %c4o = index.constant 4 : offset
  %zg = index.scale %gbase, %c4o : index, offset -> offset
`)
		at = "%zg"
		// Workgroup memory: a 64-element tile per workgroup (batchwg.go).
		b.WriteString(`  %tid = kernel.workitem.id<x> : index
  %wgb = index.constant 256 : offset
  %wgm = buffer.alloca<workgroup> align(16) %wgb : buffer
  %tw = buffer.view %wgm[%z] : buffer -> view<64xf32>
  %c2 = index.constant 2 : index
`)
		idxs = append(idxs, "%tid")
	}
	b.WriteString(`  %vf = buffer.view %bf[` + at + `] : buffer -> view<[%n]xf32>
  %vi = buffer.view %bi[` + at + `] : buffer -> view<[%n]xi32>
`)
	// Stores of the per-group form go to their own buffer, so that
	// the kernel reads no buffer it writes unless it uses atomics
	// (rerun.go) and its batches run.
	store := "%vf"
	if perGroup {
		b.WriteString("  %vo = buffer.view %bo[" + at + "] : buffer -> view<[%n]xf32>\n")
		// Rows of two for dense matrix fragments (kind 24).
		b.WriteString("  %m2 = buffer.view %bf[" + at + "] : buffer -> view<[%n]x2xf32>\n")
		store = "%vo"
	}
	// The shared form keeps the first 16 kinds of op: its seeds, run by
	// go test with two workers, stay the race-free kernels they were.
	kinds := 16
	if perGroup {
		kinds = 31
	}
	labels := 0
	var emit func(depth int, indent string)
	emit = func(depth int, indent string) {
		count := next()%6 + 1
		for j := 0; j < count && pos < len(data); j++ {
			w := func(format string, args ...any) { b.WriteString(indent + fmt.Sprintf(format, args...) + "\n") }
			switch next() % kinds {
			case 0:
				r := fresh()
				w("%s = index.constant %d : index", r, next()-100)
				idxs = append(idxs, r)
			case 1:
				r := fresh()
				op := []string{"add", "sub", "mul", "div", "rem", "min", "max", "andi", "shli"}[next()%9]
				w("%s = index.%s %s, %s : index", r, op, pick(idxs), pick(idxs))
				idxs = append(idxs, r)
			case 2:
				r := fresh()
				op := []string{"addi", "subi", "muli", "divsi", "remsi", "shli", "shrsi", "andi", "xori", "maxsi"}[next()%10]
				w("%s = scalar.%s %s, %s : i32", r, op, pick(ints), pick(ints))
				ints = append(ints, r)
			case 3:
				r := fresh()
				op := []string{"addf", "subf", "mulf", "divf", "maximumf", "minnumf"}[next()%6]
				w("%s = scalar.%s %s, %s : f32", r, op, pick(flts), pick(flts))
				flts = append(flts, r)
			case 4:
				r := fresh()
				op := []string{"sqrtf", "expf", "negf", "tanhf"}[next()%4]
				w("%s = scalar.%s %s : f32", r, op, pick(flts))
				flts = append(flts, r)
			case 5:
				r := fresh()
				w("%s = index.cast %s : index to i32", r, pick(idxs))
				ints = append(ints, r)
			case 6:
				r := fresh()
				w("%s = index.cast %s : i32 to index", r, pick(ints))
				idxs = append(idxs, r)
			case 7:
				r := fresh()
				w("%s = scalar.sitofp %s : i32 to f32", r, pick(ints))
				flts = append(flts, r)
			case 8:
				r := fresh()
				w("%s = scalar.fptosi %s : f32 to i32", r, pick(flts))
				ints = append(ints, r)
			case 9:
				r := fresh()
				w("%s = view.load %%vf[%s] : view<[%%n]xf32> -> f32", r, pick(idxs))
				flts = append(flts, r)
			case 10:
				w("view.store %s, %s[%s] : f32, view<[%%n]xf32>", pick(flts), store, pick(idxs))
			case 11:
				r := fresh()
				w("%s = view.atomic.rmw<addi> %s, %%vi[%s] {ordering = relaxed, scope = device} : i32, view<[%%n]xi32> -> i32", r, pick(ints), pick(idxs))
				ints = append(ints, r)
			case 12:
				if depth > 2 {
					continue
				}
				c := fresh()
				w("%s = index.cmp slt, %s, %s : index", c, pick(idxs), pick(idxs))
				w("scf.if %s {", c)
				ni, nn, nf := len(idxs), len(ints), len(flts)
				emit(depth+1, indent+"  ")
				idxs, ints, flts = idxs[:ni], ints[:nn], flts[:nf]
				w("}")
			case 13:
				if depth > 2 {
					continue
				}
				// Cap the trip count at 16: bounds come from arbitrary index
				// values (a shli on the carrier reaches ±2^31), and a loop
				// of billions of iterations is slow, not wrong.
				iv, acc, r, span, hi, capped := fresh(), fresh(), fresh(), fresh(), fresh(), fresh()
				w("%s = index.constant 16 : index", span)
				from := pick(idxs)
				w("%s = index.add %s, %s : index", hi, from, span)
				w("%s = index.min %s, %s : index", capped, pick(idxs), hi)
				w("%s = scf.for %s = [%s to %s step %%c1] (%s = %s : f32) -> (f32) {", r, iv, from, capped, acc, pick(flts))
				ni, nn, nf := len(idxs), len(ints), len(flts)
				idxs, flts = append(idxs, iv), append(flts, acc)
				emit(depth+1, indent+"  ")
				y := pick(flts)
				idxs, ints, flts = idxs[:ni], ints[:nn], flts[:nf]
				w("  scf.yield %s : f32", y)
				w("}")
				flts = append(flts, r)
			case 14:
				w("kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}")
			case 15:
				r := fresh()
				w("%s = kernel.subgroup.reduce<addf> %s : f32", r, pick(flts))
				flts = append(flts, r)
			case 16:
				r := fresh()
				w("%s = kernel.workgroup.reduce<maxnumf> %s : f32", r, pick(flts))
				flts = append(flts, r)
			case 17:
				c := fresh()
				w("%s = index.cmp slt, %s, %s : index", c, pick(idxs), pick(idxs))
				w("kernel.exit %s", c)
			case 18:
				r, v := fresh(), fresh()
				mode := []string{"xor", "up", "down", "index"}[next()%4]
				w("%s, %s = kernel.subgroup.shuffle<%s> %s, %s, %%w4 : f32, i32, i32", r, v, mode, pick(flts), pick(ints))
				flts = append(flts, r)
			case 19:
				r := fresh()
				what := []string{"kernel.subgroup.lane.id", "kernel.subgroup.id", "kernel.workitem.id<x>"}[next()%3]
				w("%s = %s : index", r, what)
				idxs = append(idxs, r)
			case 20:
				r := fresh()
				w("%s = view.load %%tw[%s] : view<64xf32> -> f32", r, pick(idxs))
				flts = append(flts, r)
			case 21:
				w("view.store %s, %%tw[%s] : f32, view<64xf32>", pick(flts), pick(idxs))
			case 22:
				// A tree step: guard on the work-item id, a fused
				// load-load-op-store through the tile (batchwg.go).
				c, j, x, y, z := fresh(), fresh(), fresh(), fresh(), fresh()
				pred := []string{"ult", "slt", "eq"}[next()%3]
				w("%s = index.cmp %s, %%tid, %s : index", c, pred, pick(idxs))
				w("scf.if %s {", c)
				w("  %s = index.add %%tid, %s : index", j, pick(idxs))
				w("  %s = view.load %%tw[%%tid] : view<64xf32> -> f32", x)
				w("  %s = view.load %%tw[%s] : view<64xf32> -> f32", y, j)
				w("  %s = scalar.%s %s, %s : f32", z, []string{"addf", "subf", "mulf", "divf"}[next()%4], x, y)
				w("  view.store %s, %%tw[%%tid] : f32, view<64xf32>", z)
				w("}")
			case 23:
				// A guarded copy into the tile (fuse.go, batchwg.go).
				c, v, x := fresh(), fresh(), fresh()
				w("%s = index.cmp ult, %%i, %s : index", c, pick(idxs))
				w("%s = scf.if %s -> (f32) {", x, c)
				w("  %s = view.load %%vf[%%i] : view<[%%n]xf32> -> f32", v)
				w("  scf.yield %s : f32", v)
				w("} else {")
				w("  scf.yield %s : f32", pick(flts))
				w("}")
				w("view.store %s, %%tw[%s] : f32, view<64xf32>", x, pick(idxs))
			case 24:
				// Dense matrix fragments: a 2×2 by 2×2 vector.mma per
				// work-item, one lane of it kept.
				x, y, acc, r, e := fresh(), fresh(), fresh(), fresh(), fresh()
				w("%s = vector.fragment.load<lhs> %%m2[%s, %%c0] shape [%%c2, %%c2] : view<[%%n]x2xf32> -> vector<4xf32>", x, pick(idxs))
				w("%s = vector.fragment.load<rhs> %%m2[%s, %%c0] shape [%%c2, %%c2] : view<[%%n]x2xf32> -> vector<4xf32>", y, pick(idxs))
				w("%s = vector.splat %s : f32 -> vector<4xf32>", acc, pick(flts))
				w("%s = vector.mma %s, %s, %s : vector<4xf32>, vector<4xf32>, vector<4xf32>", r, x, y, acc)
				w("%s = vector.extract %s[%s] : vector<4xf32> -> f32", e, r, pick([]string{"%c0", "%c1"}))
				flts = append(flts, e)
			case 25:
				// Bit packing, integer dots and lane moves (the shared
				// lowering, loom.Lower): two words as lanes, one lane kept.
				v, x, r, e := fresh(), fresh(), fresh(), fresh()
				w("%s = vector.from_elements %s, %s : i32, i32 -> vector<2xi32>", v, pick(ints), pick(ints))
				switch next() % 8 {
				case 0:
					acc := fresh()
					w("%s = vector.bitcast %s : vector<2xi32> to vector<8xi8>", x, v)
					w("%s = vector.from_elements %s, %s : i32, i32 -> vector<2xi32>", acc, pick(ints), pick(ints))
					w("%s = vector.dot4i<%s> %s, %s, %s : vector<8xi8>, vector<8xi8>, vector<2xi32>", r, []string{"s8s8", "u8s8", "s8u8", "u8u8"}[next()%4], x, x, acc)
				case 1:
					w("%s = vector.dot8i4<%s> %s, %s, %s : vector<2xi32>", r, []string{"s4s4", "u4s4", "s4u4", "u4u4"}[next()%4], v, v, v)
				case 2:
					off, wd := next()%24, next()%8+1
					w("%s = vector.bitfield.%s %s {offset = %d, width = %d} : vector<2xi32> -> vector<2xi32>", r, []string{"extractu", "extracts"}[next()%2], v, off, wd)
				case 3:
					w("%s = vector.bitfield.insert %s into %s {offset = %d, width = %d} : vector<2xi32>, vector<2xi32>", r, v, v, next()%16, next()%16+1)
				case 4:
					wd := []int{4, 8, 16}[next()%3]
					w("%s = vector.bitunpack%s<%d> %s : vector<2xi32> -> vector<%dxi32>", x, []string{"u", "s"}[next()%2], wd, v, 64/wd)
					w("%s = vector.bitpack<%d> %s : vector<%dxi32> -> vector<2xi32>", r, wd, x, 64/wd)
				case 6:
					// Lane moves: split the bytes into even and odd
					// lanes, interleave them back swapped.
					y, z, q := fresh(), fresh(), fresh()
					w("%s = vector.bitcast %s : vector<2xi32> to vector<8xi8>", x, v)
					w("%s, %s = vector.deinterleave<0> %s : vector<8xi8> -> vector<4xi8>, vector<4xi8>", y, z, x)
					w("%s = vector.interleave<0> %s, %s : vector<4xi8>, vector<4xi8> -> vector<8xi8>", q, []string{y, z}[next()%2], []string{y, z}[next()%2])
					w("%s = vector.bitcast %s : vector<8xi8> to vector<2xi32>", r, q)
				case 7:
					// Lane moves along either axis of a 2x4 matrix of bytes.
					y, z, q := fresh(), fresh(), fresh()
					ax := next() % 2
					half := []string{"vector<1x4xi8>", "vector<2x2xi8>"}[ax]
					w("%s = vector.bitcast %s : vector<2xi32> to vector<2x4xi8>", x, v)
					w("%s, %s = vector.deinterleave<%d> %s : vector<2x4xi8> -> %s, %s", y, z, ax, x, half, half)
					w("%s = vector.concat<%d> %s, %s : %s, %s -> vector<2x4xi8>", q, ax, []string{y, z}[next()%2], []string{y, z}[next()%2], half, half)
					w("%s = vector.bitcast %s : vector<2x4xi8> to vector<2xi32>", r, q)
				default:
					w("%s = vector.bitcast %s : vector<2xi32> to vector<4xi16>", x, v)
					w("%s = vector.bitcast %s : vector<4xi16> to vector<2xi32>", r, x)
				}
				w("%s = vector.extract %s[%s] : vector<2xi32> -> i32", e, r, pick([]string{"%c0", "%c1"}))
				ints = append(ints, e)
			case 26:
				// Math the shared pass lowers on PTX (native here).
				r := fresh()
				switch next() % 7 {
				case 0:
					w("%s = scalar.%s %s : f32", r, []string{"sinf", "cosf"}[next()%2], pick(flts))
				case 1:
					w("%s = scalar.%s %s, %s : f32", r, []string{"powf", "atan2f"}[next()%2], pick(flts), pick(flts))
				case 2:
					w("%s = scalar.clampf<%s> %s, %s, %s : f32", r, []string{"ordered", "number, nnan", "ieee"}[next()%3], pick(flts), pick(flts), pick(flts))
				case 3:
					w("%s = scalar.%s %s : f32", r, []string{"floorf", "roundf"}[next()%2], pick(flts))
				case 4:
					w("%s = scalar.%s %s : f32", r, pick([]string{"sinturnsf", "costurnsf", "softplusf", "signf", "geluf<erf>", "geluf<tanh, afn>", "log1pf", "expm1f",
						"atanf", "sinhf", "coshf", "tanf", "asinf", "acosf", "erfcf", "asinhf", "acoshf", "atanhf", "cbrtf"}), pick(flts))
				case 5:
					// Integer signs, and index shifts and rotates over the
					// 64-bit value (counts past 63 and results past the
					// carrier are errors).
					switch next() % 3 {
					case 0:
						w("%s = scalar.signi %s : i32", r, pick(ints))
						ints = append(ints, r)
					case 1:
						w("%s = index.%s %s, %s : index", r, []string{"rotli", "rotri", "shrui", "shli"}[next()%4], pick(idxs), pick(idxs))
						idxs = append(idxs, r)
					default:
						w("%s = scalar.%s %s, %s : i32", r, []string{"rotli", "rotri"}[next()%2], pick(ints), pick(ints))
						ints = append(ints, r)
					}
					continue
				default:
					// Lane-wise forms on a vector of two.
					v, e := fresh(), fresh()
					w("%s = vector.from_elements %s, %s : f32, f32 -> vector<2xf32>", v, pick(flts), pick(flts))
					w("%s = vector.%s %s : vector<2xf32>", e, pick([]string{"sinturnsf", "softplusf", "signf", "atanf", "sinhf", "tanf", "erfcf", "atanhf", "cbrtf"}), v)
					w("%s = vector.extract %s[%s] : vector<2xf32> -> f32", r, e, pick([]string{"%c0", "%c1"}))
				}
				flts = append(flts, r)
			case 27:
				// A dynamic lane count: the shared pass's lane loop.
				v, p, r, k := fresh(), fresh(), fresh(), fresh()
				w("%s = index.min %s, %%n : index", k, pick(idxs))
				w("%s = vector.load %%vf[%s] : view<[%%n]xf32> -> vector<[%s]xf32>", v, pick(idxs), k)
				w("%s = vector.mulf %s, %s : vector<[%s]xf32>", p, v, v, k)
				w("%s = vector.reduce<%s> %s, %s : vector<[%s]xf32>, f32", r, []string{"addf", "maxnumf"}[next()%2], p, pick(flts), k)
				flts = append(flts, r)
			case 28:
				// FP8 round trips.
				h, r := fresh(), fresh()
				f := []string{"f8E4M3", "f8E5M2"}[next()%2]
				w("%s = scalar.fptrunc %s : f32 to %s", h, pick(flts), f)
				w("%s = scalar.extf %s : %s to f32", r, h, f)
				flts = append(flts, r)
			case 29:
				// Unstructured control flow at the body's top level (the
				// shared lowering structures it): a diamond whose join
				// takes a block argument, or a loop formed by a back
				// edge with a capped trip count, left at its header
				// (a plain scf.while) or also from inside its body.
				if depth > 0 {
					continue
				}
				labels++
				l := labels
				ni, nn, nf := len(idxs), len(ints), len(flts)
				c := fresh()
				shape := next() % 3
				if shape == 0 {
					w("%s = index.cmp slt, %s, %s : index", c, pick(idxs), pick(idxs))
					w("cfg.cond_br %s, ^t%d, ^e%d", c, l, l)
					for _, arm := range []string{"t", "e"} {
						b.WriteString(fmt.Sprintf("^%s%d:\n", arm, l))
						emit(depth+1, indent)
						w("cfg.br ^j%d(%s: f32)", l, pick(flts))
						idxs, ints, flts = idxs[:ni], ints[:nn], flts[:nf]
					}
					r := fresh()
					b.WriteString(fmt.Sprintf("^j%d(%s: f32):\n", l, r))
					flts = append(flts, r)
					continue
				}
				span, hi, acc, iv, next1, acc1 := fresh(), fresh(), fresh(), fresh(), fresh(), fresh()
				w("%s = index.constant 16 : index", span)
				from := pick(idxs)
				w("%s = index.add %s, %s : index", hi, from, span)
				w("cfg.br ^h%d(%s: f32, %s: index)", l, pick(flts), from)
				b.WriteString(fmt.Sprintf("^h%d(%s: f32, %s: index):\n", l, acc, iv))
				w("%s = index.cmp slt, %s, %s : index", c, iv, hi)
				w("cfg.cond_br %s, ^b%d, ^x%d", c, l, l)
				b.WriteString(fmt.Sprintf("^b%d:\n", l))
				idxs, flts = append(idxs, iv), append(flts, acc)
				emit(depth+1, indent)
				if shape == 2 {
					brk := fresh()
					w("%s = index.cmp slt, %s, %s : index", brk, pick(idxs), pick(idxs))
					w("cfg.cond_br %s, ^x%d, ^c%d", brk, l, l)
					b.WriteString(fmt.Sprintf("^c%d:\n", l))
				}
				w("%s = scalar.addf %s, %s : f32", acc1, acc, pick(flts))
				w("%s = index.add %s, %%c1 : index", next1, iv)
				w("cfg.br ^h%d(%s: f32, %s: index)", l, acc1, next1)
				idxs, ints, flts = idxs[:ni], ints[:nn], flts[:nf]
				b.WriteString(fmt.Sprintf("^x%d:\n", l))
				flts = append(flts, acc)
			case 30:
				// An asynchronous copy (or subgroup gather) of one element
				// into the tile, masked to in-bounds sources, its group
				// and wait (the shared pass checks the stream, then
				// lowers it to a load and a store).
				sv, dv, p, tok, g := fresh(), fresh(), fresh(), fresh(), fresh()
				at, last, lo, j := pick(idxs), fresh(), fresh(), fresh()
				w("%s = index.cmp ult, %s, %%n : index", p, at)
				// The subview stays in bounds; the mask skips the copy.
				w("%s = index.sub %%n, %%c1 : index", last)
				w("%s = index.min %s, %s : index", lo, at, last)
				w("%s = index.max %s, %%c0 : index", j, lo)
				w("%s = view.subview %%vf[%s] : view<[%%n]xf32> -> view<1xf32>", sv, j)
				const attrs = "cache_scope = cu, cache_temporal = regular"
				if next()%2 == 0 {
					w("%s = view.subview %%tw[%%tid] : view<64xf32> -> view<1xf32>", dv)
					w("%s = kernel.async.copy.mask %s to %s, %s {%s, direction = global_to_workgroup} : view<1xf32> to view<1xf32>, i1 -> kernel.async.token", tok, sv, dv, p, attrs)
				} else {
					w("%s = buffer.view %%wgm[%%z] : buffer -> view<64x1xf32>", dv)
					w("%s = kernel.async.gather.mask %s to %s, %s {%s} : view<1xf32> to view<64x1xf32>, i1 -> kernel.async.token", tok, sv, dv, p, attrs)
				}
				w("%s = kernel.async.group %s : kernel.async.token -> kernel.async.group", g, tok)
				w("kernel.async.wait %s {newer_groups = 0} : kernel.async.group", g)
			}
		}
	}
	emit(0, "  ")
	if perGroup {
		return inlineKernel("%n: index, %bf: buffer, %bi: buffer, %bo: buffer", b.String())
	}
	return inlineKernel("%n: index, %bf: buffer, %bi: buffer", b.String())
}

func FuzzRun(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add([]byte{5, 9, 0, 10, 3, 1, 12, 1, 0, 2, 3, 9, 1, 10, 0, 0})
	f.Add([]byte{6, 13, 0, 1, 2, 3, 9, 0, 11, 0, 1, 14, 15, 0})
	f.Add([]byte{4, 1, 2, 200, 7, 2, 3, 1, 1, 9, 250, 8, 12, 3, 1, 2, 14})
	f.Add([]byte{3, 0, 255, 1, 3, 4, 5, 11, 2, 3, 10, 1, 4})
	// Tree steps and guarded copies through workgroup memory in the
	// per-group form (kinds 22 and 23).
	f.Add([]byte{5, 22, 0, 3, 4, 0, 23, 2, 0, 4, 22, 2, 1, 3, 1, 21, 0, 4, 20, 4})
	f.Add([]byte{4, 0, 7, 22, 1, 4, 4, 2, 14, 22, 0, 4, 4, 0, 9, 4})
	// Dense matrix fragments in the per-group form (kind 24).
	f.Add([]byte{4, 24, 0, 1, 0, 0, 24, 2, 2, 0, 1, 10, 0, 1})
	// The shared lowering's ops in the per-group form (kinds 25 and 26).
	f.Add([]byte{6, 25, 0, 0, 0, 0, 1, 25, 0, 0, 1, 2, 1, 0, 26, 0, 0, 0, 26, 1, 0, 0, 25, 0, 0, 4, 1, 1, 0})
	f.Add([]byte{5, 25, 0, 0, 2, 5, 7, 1, 1, 25, 0, 0, 3, 4, 5, 0, 26, 2, 1, 0, 0, 0, 25, 0, 0, 5, 1})
	// Signs, turns, softplus, gelu, log1p, expm1, atan/atan2, sinh/cosh, tan,
	// asin/acos, erfc, asinh/acosh/atanh, cbrt, integer rotates, and index shifts and
	// rotates (kind 26, forms 4 to 6).
	f.Add([]byte{5, 26, 4, 0, 0, 26, 4, 1, 1, 26, 4, 2, 0, 26, 4, 3, 1, 26, 5, 0, 0, 26, 5, 1, 0, 0, 3})
	f.Add([]byte{3, 26, 4, 4, 0, 26, 4, 5, 1, 26, 6, 0, 1, 1, 0, 26, 5, 2, 0, 0, 0})
	// 57 is kind 26 in the per-group form (57 % 31) but a load in the
	// shared form (57 % 16), whose two workers then stay race-free; with
	// 26 first, the shared form stored to %vf[%c0] from every invocation.
	f.Add([]byte{1, 57, 4, 6, 0, 26, 4, 7, 1})
	f.Add([]byte{5, 26, 5, 1, 1, 1, 3, 26, 5, 1, 2, 0, 3, 26, 6, 0, 1, 0, 0, 26, 6, 1, 2, 1, 1, 26, 6, 2, 0, 2, 0, 26, 5, 1, 3, 0, 2})
	// Lane moves (kind 25, forms 6 and 7: deinterleave, interleave, concat).
	f.Add([]byte{5, 25, 0, 0, 6, 1, 0, 0, 25, 0, 0, 7, 1, 0, 1, 1, 25, 0, 0, 7, 0, 1, 1, 0, 20, 4})
	// Dynamic lane counts and FP8 round trips (kinds 27 and 28).
	f.Add([]byte{4, 27, 1, 2, 0, 0, 28, 0, 1, 27, 0, 0, 1, 1, 28, 1, 0})
	// cfg diamonds and back-edge loops at the top level (kind 29).
	f.Add([]byte{4, 29, 0, 1, 2, 2, 3, 0, 1, 4, 1, 9, 1, 2, 29, 1, 3, 2, 2, 3, 0, 1, 5, 10, 0, 2})
	f.Add([]byte{5, 29, 1, 0, 2, 1, 14, 3, 0, 1, 2, 29, 0, 3, 0, 2, 15, 1, 2, 12, 0, 1, 1, 9, 0, 0, 10, 1, 0})
	f.Add([]byte{4, 29, 2, 0, 2, 2, 3, 0, 1, 1, 9, 1, 0, 3, 2, 29, 2, 1, 0, 3, 1, 10, 0, 1, 2, 0})
	// Asynchronous copies and gathers into the tile (kind 30).
	f.Add([]byte{4, 30, 0, 0, 30, 1, 1, 22, 0, 3, 4, 0, 30, 2, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 400 {
			return
		}
		src := genKernel(data, false)
		m, err := loom.ParseFile("fuzz.loom", []byte(src))
		if err != nil {
			return
		}
		k, err := Compile([]*loom.Module{m}, "k", Options{Workers: 2})
		if err != nil {
			return
		}
		n := int64(len(data)%7 + 1)
		// Once one workgroup at a time, once (where the kernel allows)
		// as one batch of both.
		for _, groups := range []int{0, 2} {
			batchGroups = groups
			bf, bi := make([]byte, 4*n), make([]byte, 4*n)
			err = k.Run(Launch{Workgroups: [3]int{2, 1, 1}, WorkgroupSize: [3]int{int(n) + 3, 1, 1}},
				[]Arg{idx(n), buf(bf), buf(bi)})
			batchGroups = 0
			if err != nil && strings.Contains(err.Error(), "executor fault") {
				t.Fatalf("panic inside the executor (batch %d):\n%s\n%v", groups, src, err)
			}
		}
		// The fused forms (rangeif.go, fuse.go) must give the bytes and
		// errors of the ops run one by one; one worker keeps the order
		// of workgroups, and so the results, deterministic.
		var outs [2][2][]byte
		var errs [2]string
		for pass, off := range []bool{false, true} {
			noRangeIf, noFuse = off, off
			k1, err := Compile([]*loom.Module{m}, "k", Options{Workers: 1})
			noRangeIf, noFuse = false, false
			if err != nil {
				t.Fatalf("compile with fusion off=%v: %v", off, err)
			}
			bf, bi := make([]byte, 4*n), make([]byte, 4*n)
			if err := k1.Run(Launch{Workgroups: [3]int{2, 1, 1}, WorkgroupSize: [3]int{int(n) + 3, 1, 1}},
				[]Arg{idx(n), buf(bf), buf(bi)}); err != nil {
				errs[pass] = err.Error()
			}
			outs[pass] = [2][]byte{bf, bi}
		}
		if errs[0] != errs[1] || !bytes.Equal(outs[0][0], outs[1][0]) || !bytes.Equal(outs[0][1], outs[1][1]) {
			t.Fatalf("fused and unfused runs differ:\n%s\nfused: %q %v %v\nunfused: %q %v %v", src, errs[0], outs[0][0], outs[0][1], errs[1], outs[1][0], outs[1][1])
		}
		batchedAgrees(t, data, n)
	})
}

// batchedAgrees runs the per-group form of the fuzzed kernel (no group
// sees another's memory) on one worker, with subgroups of 4 so that
// workgroups hold whole and partial subgroups, once workgroup by workgroup
// and once in batches of 2 of 3 groups (one left over): errors, and the
// bytes of a run without error, must be the same.
func batchedAgrees(t *testing.T, data []byte, n int64) {
	src := genKernel(data, true)
	m, err := loom.ParseFile("fuzz.loom", []byte(src))
	if err != nil {
		return
	}
	opts := Options{Workers: 1, Target: loom.Target{IndexBits: 32, OffsetBits: 64, SubgroupSize: 4}}
	var outs [2][3][]byte
	var errs [2]string
	exact := true
	for pass := range 2 {
		k, err := Compile([]*loom.Module{m}, "k", opts)
		if err != nil {
			return
		}
		// The batched form of a kernel without barriers that reads what
		// it writes reports the first error its batch meets (rerun.go):
		// there only whether it failed compares.
		exact = exact && (k.rerunSafe || k.groupOps)
		if pass == 0 {
			k.batch = nil
		} else {
			batchGroups = 2
		}
		const groups = 3
		bf, bi, bo := make([]byte, 4*n*groups), make([]byte, 4*n*groups), make([]byte, 4*n*groups)
		if err := k.Run(Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{int(n) + 3, 1, 1}},
			[]Arg{idx(n), buf(bf), buf(bi), buf(bo)}); err != nil {
			errs[pass] = err.Error()
			if !exact {
				errs[pass] = "failed"
			}
		}
		batchGroups = 0
		outs[pass] = [3][]byte{bf, bi, bo}
	}
	// After an error the bytes are those of whatever ran before it: a
	// batch has run its other groups' instructions up to the failure too
	// (as several workers would), so only a successful run's bytes count.
	if errs[0] != errs[1] || errs[0] == "" && (!bytes.Equal(outs[0][0], outs[1][0]) || !bytes.Equal(outs[0][1], outs[1][1]) || !bytes.Equal(outs[0][2], outs[1][2])) {
		t.Fatalf("batched and unbatched runs differ:\n%s\nunbatched: %q %v\nbatched: %q %v", src, errs[0], outs[0], errs[1], outs[1])
	}
}
