module github.com/loomgen/loomgen/examples/gen

go 1.26.0

require github.com/loomgen/loomgen v0.0.0

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/ebitengine/purego v0.11.3 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

replace github.com/loomgen/loomgen => ../..
