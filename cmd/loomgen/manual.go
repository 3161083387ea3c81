package main

// manual is what -h prints; doc.go carries the same text as the package
// documentation (a test keeps the two equal).
const manual = `Loomgen generates typed Go bindings for Loom GPU kernels.

Usage:

	loomgen [flags] inputs...
	loomgen doc [-o file] [-pkg name] inputs...
	loomgen init [-pkg name] [dir]
	loomgen inspect [-json] [-backends] inputs...
	loomgen test [-backend auto|cpu|cuda|hip] [-run regexp] [-json] [-race] [-bench] inputs...

Inputs are .loom files, glob patterns (quoted, loomgen expands them) or
directories, whose *.loom files are taken. Loomgen parses them, infers each
buffer's access from the kernel bodies, and writes one Go file (loom_gen.go
by default) into the package that holds it:

  - a type per kernel, named from its export name (scale_f32 becomes
    ScaleF32), whose Dispatch method takes the kernel's workload and launch
    parameters with Go types, checks their where/assume predicates and each
    buffer's length, computes the grid and workgroup size from the kernel's
    launch-config region, and binds every buffer with its inferred access;
  - a Config struct with a typed field per config.decl, and Validate;
  - a Kernels struct and Load(session, Config), which compiles every kernel
    in one batch and fails with loomrt.ErrStaleBinding when the .loom files
    no longer match the bindings.

When the sources hold check.case definitions (Loom's check dialect),
loomgen also writes loom_check_test.go beside the bindings: go test runs
every case, each parameter combination a subtest, on the CPU backend and
on the GPU when one is found, and go test -bench runs each check.benchmark.

The package name comes from -pkg, else from $GOPACKAGE under go generate,
else from the package's Go files (go/packages), else from the directory.
Generated names that collide with identifiers the package already declares
are errors naming both places. The output is gofmt'd, deterministic, and not
rewritten when its bytes are unchanged.

Typical use, in a file of the model package:

	//go:generate go run github.com/loomgen/loomgen/cmd/loomgen kernels

In CI, fail when the checked-in bindings are stale:

	loomgen -check kernels

Flags:

	-o file    output file, or directory for loom_gen.go (default loom_gen.go)
	-pkg name  package name of the output
	-check     generate in memory and compare with the output file; print a
	           unified diff and exit 1 when it is stale or missing
	-v         report what was generated or that nothing changed
	-checktests=false
	           do not write loom_check_test.go

Subcommands:

	doc      write a Markdown reference of the kernels (signatures, access,
	         extents, config and its constraints, launch geometry) to
	         standard output, or to -o
	init     scaffold a model package in dir (default .): kernels/scale.loom,
	         a go:generate line, a smoke test running every kernel on the
	         CPU backend, and the generated bindings
	inspect  print what the analyses infer for each kernel of the inputs,
	         analysed as one package like the generator's
	test     run the check cases of the inputs on one backend (-backend,
	         default auto), printing PASS name[params] time, FAIL name: why
	         or SKIP name: reason per sub-case and a summary; -run selects
	         sub-cases by name, -json prints one object per case
	         {case, params, backend, status, reason, elapsed_ns}, -race
	         runs every case in the CPU executor's checked mode (data races
	         in workgroup memory and between workgroups, out-of-bounds
	         accesses), -bench also times the check.benchmark entries
	         (ns/op, GB/s); exit status 1 when a case fails

Errors are printed as path:line:col: message, all of a run before exiting.
Exit status: 0 success, 1 input errors or a stale file under -check, 2 usage
errors.
`
