package interp

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
