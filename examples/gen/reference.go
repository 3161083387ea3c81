package main

import "math"

// Shape is the size of the model: Tokens rows of Dim features, an MLP of
// Hidden units and a classifier over Classes.
type Shape struct {
	Tokens, Dim, Hidden, Classes int
}

// Params holds the model's weights, row-major.
type Params struct {
	Gamma, Beta []float32 // [Dim]
	W1          []float32 // [Dim × Hidden]
	B1          []float32 // [Hidden]
	W2          []float32 // [Hidden × Dim]
	B2          []float32 // [Dim]
	Wc          []float32 // [Dim × Classes]
	Bc          []float32 // [Classes]
}

// newParams draws weights deterministically from seed, scaled so that
// activations stay in a well-conditioned range.
func newParams(sh Shape, seed uint64) Params {
	r := newRand(seed)
	uniform := func(n int, scale float64) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32((r.float64()*2 - 1) * scale)
		}
		return out
	}
	return Params{
		Gamma: uniform(sh.Dim, 0.2),
		Beta:  uniform(sh.Dim, 0.1),
		W1:    uniform(sh.Dim*sh.Hidden, 1/math.Sqrt(float64(sh.Dim))),
		B1:    uniform(sh.Hidden, 0.1),
		W2:    uniform(sh.Hidden*sh.Dim, 1/math.Sqrt(float64(sh.Hidden))),
		B2:    uniform(sh.Dim, 0.1),
		Wc:    uniform(sh.Dim*sh.Classes, 1/math.Sqrt(float64(sh.Dim))),
		Bc:    uniform(sh.Classes, 0.1),
	}
}

// newBatch draws one batch of token vectors.
func newBatch(sh Shape, seed uint64) []float32 {
	r := newRand(seed)
	x := make([]float32, sh.Tokens*sh.Dim)
	for i := range x {
		x[i] = float32(r.float64()*4 - 2)
	}
	return x
}

// splitmix64 keeps the weights identical on every platform and Go version.
type rng struct{ state uint64 }

func newRand(seed uint64) *rng { return &rng{state: seed} }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) float64() float64 { return float64(r.next()>>11) / (1 << 53) }

// reference computes the model in float64: the value the kernels approximate.
func reference(sh Shape, p Params, x []float32, eps float64, geluTanh bool) []float64 {
	T, D, F, C := sh.Tokens, sh.Dim, sh.Hidden, sh.Classes
	ln := make([]float64, T*D)
	for t := range T {
		var sum, sumsq float64
		for d := range D {
			v := float64(x[t*D+d])
			sum += v
			sumsq += v * v
		}
		mean := sum / float64(D)
		variance := math.Max(sumsq/float64(D)-mean*mean, 0)
		rstd := 1 / math.Sqrt(variance+eps)
		for d := range D {
			ln[t*D+d] = (float64(x[t*D+d])-mean)*rstd*float64(p.Gamma[d]) + float64(p.Beta[d])
		}
	}
	h := matmulBias(ln, p.W1, p.B1, T, D, F)
	for i, v := range h {
		if geluTanh {
			h[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		} else {
			h[i] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
		}
	}
	z := matmulBias(h, p.W2, p.B2, T, F, D)
	y := make([]float64, T*D)
	for i := range y {
		y[i] = float64(x[i]) + z[i]
	}
	logits := matmulBias(y, p.Wc, p.Bc, T, D, C)
	probs := make([]float64, T*C)
	for t := range T {
		row := logits[t*C : (t+1)*C]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(v - mx)
		}
		for c, v := range row {
			probs[t*C+c] = math.Exp(v-mx) / sum
		}
	}
	return probs
}

func matmulBias(a []float64, b, bias []float32, m, k, n int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			acc := float64(bias[j])
			for e := range k {
				acc += a[i*k+e] * float64(b[e*n+j])
			}
			out[i*n+j] = acc
		}
	}
	return out
}
