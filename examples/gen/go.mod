module github.com/loomgen/loomgen/examples/gen

go 1.26.0

require github.com/loomgen/loomgen v0.0.0

replace github.com/loomgen/loomgen => ../..
