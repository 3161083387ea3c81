package interp

import "math"

// fastBinF specializes the hottest float ops (add, sub, mul, div on f32 and
// f64) so their lane loops carry no indirect call, including the common
// vector-times-uniform-scalar shape.
func fastBinF(name string, r, a, b *slot, rnd ffmt) instr {
	if rnd.kind == fMini {
		return nil
	}
	f32 := rnd.kind == fF32
	var op byte
	switch name {
	case "addf":
		op = '+'
	case "subf":
		op = '-'
	case "mulf":
		op = '*'
	case "divf":
		op = '/'
	default:
		return nil
	}
	return func(fr *frame) error {
		n := width(fr, r)
		R := fr.F[r.idx][:n]
		A, B := fr.F[a.idx], fr.F[b.idx]
		switch {
		case a.uni == r.uni && b.uni == r.uni:
			A, B = A[:n], B[:n]
			switch op {
			case '+':
				for i := range R {
					R[i] = A[i] + B[i]
				}
			case '-':
				for i := range R {
					R[i] = A[i] - B[i]
				}
			case '*':
				for i := range R {
					R[i] = A[i] * B[i]
				}
			case '/':
				for i := range R {
					R[i] = A[i] / B[i]
				}
			}
		case b.uni && b.comps == 1 && !a.uni:
			A = A[:n]
			s := B[0]
			switch op {
			case '+':
				for i := range R {
					R[i] = A[i] + s
				}
			case '-':
				for i := range R {
					R[i] = A[i] - s
				}
			case '*':
				for i := range R {
					R[i] = A[i] * s
				}
			case '/':
				for i := range R {
					R[i] = A[i] / s
				}
			}
		case a.uni && a.comps == 1 && !b.uni:
			B = B[:n]
			s := A[0]
			switch op {
			case '+':
				for i := range R {
					R[i] = s + B[i]
				}
			case '-':
				for i := range R {
					R[i] = s - B[i]
				}
			case '*':
				for i := range R {
					R[i] = s * B[i]
				}
			case '/':
				for i := range R {
					R[i] = s / B[i]
				}
			}
		default:
			A, B = fr.floats(a, !r.uni, 0)[:n], fr.floats(b, !r.uni, 1)[:n]
			f := floatBinary[name]
			for i := range R {
				R[i] = f(A[i], B[i])
			}
		}
		if f32 {
			for i, x := range R {
				R[i] = float64(float32(x))
			}
		}
		return nil
	}
}

// fma32 is fmaf on f32 values held as float64: the product of two f32 is
// exact in float64, so one float64 addition rounds once; the second rounding
// to f32 is exact unless the float64 sum lands exactly on a midpoint between
// two f32 values (or in the f32 subnormal range), where the fused operation
// decides.
func fma32(a, b, c float64) float64 {
	s := float64(a*b) + c
	bits := math.Float64bits(s)
	if bits&(1<<29-1) == 1<<28 || math.Abs(s) < 0x1p-126 {
		return float64(float32(math.FMA(a, b, c)))
	}
	return float64(float32(s))
}

// fastFMA runs fmaf over lanes with uniform operands read in place.
func fastFMA(r, a, b, c *slot, f32 bool) instr {
	return func(fr *frame) error {
		n := width(fr, r)
		R := fr.F[r.idx][:n]
		A, B, C := fr.F[a.idx], fr.F[b.idx], fr.F[c.idx]
		sa, sb, sc := 1, 1, 1
		if a.uni != r.uni {
			sa = 0
		}
		if b.uni != r.uni {
			sb = 0
		}
		if c.uni != r.uni {
			sc = 0
		}
		if r.comps != 1 && (sa == 0 || sb == 0 || sc == 0) {
			A, B, C = fr.floats(a, !r.uni, 0), fr.floats(b, !r.uni, 1), fr.floats(c, !r.uni, 2)
			sa, sb, sc = 1, 1, 1
		}
		if f32 {
			for i := range R {
				R[i] = fma32(A[i*sa], B[i*sb], C[i*sc])
			}
			return nil
		}
		for i := range R {
			R[i] = math.FMA(A[i*sa], B[i*sb], C[i*sc])
		}
		return nil
	}
}

// fastCmpI specializes index/integer comparisons of the common predicates.
func fastCmpI(pred string, nb int, r, a, b *slot) instr {
	if r.comps != 1 {
		return nil
	}
	mask := uint64(1)<<uint(nb) - 1
	if nb >= 64 {
		mask = ^uint64(0)
	}
	return func(fr *frame) error {
		n := width(fr, r)
		R := fr.I[r.idx][:n]
		A, B := fr.I[a.idx], fr.I[b.idx]
		sa, sb := 1, 1
		if a.uni != r.uni {
			sa = 0
		}
		if b.uni != r.uni {
			sb = 0
		}
		switch pred {
		case "ult":
			for i := range R {
				R[i] = b2i(uint64(A[i*sa])&mask < uint64(B[i*sb])&mask)
			}
		case "slt":
			for i := range R {
				R[i] = b2i(A[i*sa] < B[i*sb])
			}
		case "sge":
			for i := range R {
				R[i] = b2i(A[i*sa] >= B[i*sb])
			}
		case "uge":
			for i := range R {
				R[i] = b2i(uint64(A[i*sa])&mask >= uint64(B[i*sb])&mask)
			}
		case "eq":
			for i := range R {
				R[i] = b2i(A[i*sa] == B[i*sb])
			}
		case "ne":
			for i := range R {
				R[i] = b2i(A[i*sa] != B[i*sb])
			}
		default:
			f := intCompare(pred, nb)
			for i := range R {
				R[i] = b2i(f(A[i*sa], B[i*sb]))
			}
		}
		return nil
	}
}
