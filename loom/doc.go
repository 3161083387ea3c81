// Package loom is the front end for the Loom GPU kernel language: a lexer
// with a shape scanner, a parser to a syntax tree with positions on every
// node, a checker for SSA scoping and symbols, and the analyses the rest of
// loomgen needs — buffer access inference, launch-config evaluation, buffer
// extents and signature fingerprints.
//
// ParsePackage reads the .loom files of one package into Modules checked
// together (a symbol defined in one file is visible in all; a symbol
// defined twice is an error naming both places); ParseFile is the package
// of one file. Every error carries a path:line:col position and all errors
// of a package are reported together.
package loom
