package main

import (
	"fmt"

	loomrt "github.com/loomgen/loomgen/runtime"
)

// graphKey names the model's recording in its session.
const graphKey = "mlp_block"

// model is the MLP block resident on a session: weights, planned
// temporaries, and the recorded graph of one forward pass.
type model struct {
	sess   *loomrt.Session
	shape  Shape
	eps    float32
	input  loomrt.Slice[float32] // [Tokens × Dim], uploaded per batch
	output loomrt.Slice[float32] // [Tokens × Classes]
	// scratchBytes is the size of the planned temporaries, against
	// unplannedBytes had each temporary its own allocation.
	scratchBytes, unplannedBytes int
}

// scratch names the temporaries of one forward pass.
type scratch int

const (
	normed    scratch = iota // layer-norm output [Tokens × Dim]
	hidden                   // first projection, then GELU in place [Tokens × Hidden]
	projected                // second projection [Tokens × Dim]
	residual                 // input + projected [Tokens × Dim]
	logits                   // classifier [Tokens × Classes]
)

// newModel uploads the weights, plans the temporaries and records one
// forward pass into a graph.
func newModel(s *loomrt.Session, cfg Config, sh Shape, p Params, eps float32) (*model, error) {
	k, err := Load(s, cfg)
	if err != nil {
		return nil, err
	}
	weights := func(data []float32) loomrt.Slice[float32] {
		if err != nil {
			return loomrt.Slice[float32]{}
		}
		var w loomrt.Slice[float32]
		w, err = loomrt.Weights(s, data)
		return w
	}
	gamma, beta := weights(p.Gamma), weights(p.Beta)
	w1, b1 := weights(p.W1), weights(p.B1)
	w2, b2 := weights(p.W2), weights(p.B2)
	wc, bc := weights(p.Wc), weights(p.Bc)
	if err != nil {
		return nil, fmt.Errorf("uploading weights: %w", err)
	}
	m := &model{sess: s, shape: sh, eps: eps}
	if m.input, err = loomrt.Alloc[float32](s, sh.Tokens*sh.Dim); err != nil {
		return nil, err
	}
	if m.output, err = loomrt.Alloc[float32](s, sh.Tokens*sh.Classes); err != nil {
		return nil, err
	}

	// Lifetimes are the indices of the commands below that use each
	// temporary, first to last.
	T, D, F, C := sh.Tokens, sh.Dim, sh.Hidden, sh.Classes
	var plan loomrt.ScratchPlanner[scratch]
	for _, r := range []struct {
		key         scratch
		elems       int
		first, last int
	}{
		{normed, T * D, 0, 1},
		{hidden, T * F, 1, 3},
		{projected, T * D, 3, 4},
		{residual, T * D, 4, 5},
		{logits, T * C, 5, 6},
	} {
		if err := plan.Request(r.key, 4*r.elems, r.first, r.last); err != nil {
			return nil, err
		}
		m.unplannedBytes += 4 * r.elems
	}
	pl := plan.Plan()
	m.scratchBytes = pl.Bytes()
	regions, err := pl.Allocate(s)
	if err != nil {
		return nil, err
	}
	tmp := make(map[scratch]loomrt.Slice[float32], len(regions))
	for key, r := range regions {
		if tmp[key], err = loomrt.SliceOf[float32](r); err != nil {
			return nil, err
		}
	}

	var cmds []loomrt.Command
	add := func(d loomrt.Dispatch, err error) error {
		if err != nil {
			return err
		}
		cmds = append(cmds, d)
		return nil
	}
	for _, step := range []func() error{
		// Kernels with several f32 buffers take them by name
		// (DispatchArgs): a swap that type-checks positionally reads
		// wrong here.
		func() error {
			return add(k.LayerNorm.DispatchArgs(LayerNormArgs{Rows: T, Cols: D, Eps: eps, X: m.input, Gamma: gamma, Beta: beta, Out: tmp[normed]}))
		},
		func() error {
			return add(k.MatmulBias.DispatchArgs(MatmulBiasArgs{M: T, N: F, K: D, A: tmp[normed], B: w1, Bias: b1, C: tmp[hidden]}))
		},
		func() error { return add(k.Gelu.Dispatch(T*F, tmp[hidden])) },
		func() error {
			return add(k.MatmulBias.DispatchArgs(MatmulBiasArgs{M: T, N: D, K: F, A: tmp[hidden], B: w2, Bias: b2, C: tmp[projected]}))
		},
		func() error {
			return add(k.Add.DispatchArgs(AddArgs{N: T * D, A: m.input, B: tmp[projected], Out: tmp[residual]}))
		},
		func() error {
			return add(k.MatmulBias.DispatchArgs(MatmulBiasArgs{M: T, N: C, K: D, A: tmp[residual], B: wc, Bias: bc, C: tmp[logits]}))
		},
		func() error {
			return add(k.SoftmaxRows.DispatchArgs(SoftmaxRowsArgs{Rows: T, Cols: C, X: tmp[logits], Out: m.output}))
		},
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if err := s.Record(graphKey, cmds); err != nil {
		return nil, err
	}
	return m, nil
}

// forward runs one batch through the recorded graph and returns the class
// probabilities.
func (m *model) forward(x []float32) ([]float32, error) {
	if err := loomrt.Upload(m.sess, m.input, x); err != nil {
		return nil, err
	}
	if err := m.sess.Replay(graphKey); err != nil {
		return nil, err
	}
	return loomrt.ReadSlice(m.sess, m.output)
}
