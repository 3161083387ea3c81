// Command gen is an example model repository for loomgen: a transformer-style
// MLP block with a classifier head, written as Loom kernels in kernels/,
// bound to Go by the generated loom_gen.go, recorded once into a graph and
// replayed for every batch.
//
// It runs on the embedded CPU backend by default (LOOM_BACKEND or -backend
// choose another), checks every batch against a float64 Go reference, and
// prints graph-versus-direct timings.
//
// kernels/mlp_checks.loom tests every kernel in Loom's check dialect; go
// generate turns those cases into loom_check_test.go, so go test runs them on
// the CPU backend, and on the GPU when one is found.
package main

//go:generate go run github.com/loomgen/loomgen/cmd/loomgen kernels
