// Package checkrun runs the tests and benchmarks that Loom sources carry in
// the check dialect: every check.case, once per combination of its
// check.param choices, on the CPU executor or a GPU, through a
// runtime.Session.
//
// A case is an ordinary SSA program. It materializes inputs
// (check.literal, check.generate.fill / iota / random.uniform, and our
// check.tensor.view for a sub-range of a tensor), calls kernels with
// func.call — tensors become buffers, the launch comes from the kernel's
// own kernel.launch.config region with the case's values; a func.def runs
// in a one-invocation kernel the runner writes around it — asks an oracle
// for expected values (check.oracle.call<reference.matmul> and
// <reference.tiled_matmul>, written in Go here), and states expectations
// (check.expect.equal, .close, .bitwise, .shape, .event). check.requires
// and check.skip_if skip a case whose requirement the backend does not
// meet, and a case using an op or provider this package does not support
// is skipped with a reason naming it: never a silent pass.
//
// check.expect.event<device> matches the structured reports of the CPU
// executor's checked mode (interp.Sanitize): a case that holds one runs on
// a sanitized CPU session, and is skipped on a GPU, which has no
// sanitizer. Options.Race runs every case in the checked mode.
//
// check.benchmark<@case> entries time the kernel calls of their case, at
// the parameter values they name, as Go benchmarks (ns/op and bytes/s).
//
// Test and Benchmark are the entry points of the loom_check_test.go that
// loomgen generates; loomgen test is the command-line runner.
package checkrun
