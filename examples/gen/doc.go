// Command gen is an example model repository for loomgen: a transformer-style
// MLP block with a classifier head, written as Loom kernels in kernels/,
// bound to Go by the generated loom_gen.go, recorded once into a graph and
// replayed for every batch.
//
// It runs on the embedded CPU backend by default (LOOM_BACKEND or -backend
// choose another), checks every batch against a float64 Go reference, and
// prints graph-versus-direct timings.
package main

//go:generate go run github.com/loomgen/loomgen/cmd/loomgen kernels
