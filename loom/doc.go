// Package loom is the front end for the Loom GPU kernel language: a lexer
// with a shape scanner, a parser to a syntax tree with positions on every
// node, a checker for SSA scoping and symbols, and the analyses the rest of
// loomgen needs — buffer access inference, launch-config evaluation, buffer
// extents and signature fingerprints.
//
// ParseFile reads one .loom file into a Module; every error carries a
// path:line:col position and all errors of a file are reported together.
package loom
