package loom

import (
	"errors"
	"strings"
	"testing"
)

// TestOperandTypes checks that ops given operands of the wrong type are
// errors at the operand, and that their well-typed twins parse. Each of
// these compiled before the rule and ran on the CPU executor, reading the
// operand's bits as the type the op names.
func TestOperandTypes(t *testing.T) {
	const head = "func.def @h(%a: f32, %b: i32) -> (f32) {\n  func.return %a : f32\n}\n" +
		"func.def @f(%n: index, %o: offset, %buf: buffer, %x: f32, %y: f64, %k: i32, %c: i1, %v4: vector<4xf32>, %v8: vector<8xf32>) {\n" +
		"  %z = index.constant 0 : offset\n  %c0 = index.constant 0 : index\n  %c1 = index.constant 1 : index\n" +
		"  %view = buffer.view %buf[%z] : buffer -> view<[%n]xf32>\n"
	for _, c := range []struct{ name, bad, good, want string }{
		{"scalar operands", "%r = scalar.addf %x, %n : f32", "%r = scalar.addf %x, %x : f32",
			"scalar.addf: %n has type index, the op takes f32"},
		{"float widths", "%r = scalar.mulf %x, %y : f32", "%r = scalar.mulf %y, %y : f64",
			"scalar.mulf: %y has type f64, the op takes f32"},
		{"vector lanes", "%r = vector.addf %v4, %v8 : vector<4xf32>", "%r = vector.addf %v8, %v8 : vector<8xf32>",
			"vector.addf: %v8 has type vector<8xf32>, the op takes vector<4xf32>"},
		{"index and offset", "%r = index.add %n, %o : index", "%r = index.add %o, %z : offset",
			"index.add: %o has type offset, the op takes index"},
		{"comparison", "%r = scalar.cmpi slt, %k, %n : i32", "%r = scalar.cmpi slt, %k, %k : i32",
			"scalar.cmpi: %n has type index, the op takes i32"},
		{"cast source", "%r = scalar.sitofp %n : i32 to f32", "%r = scalar.sitofp %k : i32 to f32",
			"scalar.sitofp: %n has type index, the op takes i32"},
		{"view of a non-buffer", "%w = buffer.view %n[%z] : buffer -> view<4xf32>", "%w = buffer.view %buf[%z] : buffer -> view<4xf32>",
			"buffer.view: %n has type index, the op takes a buffer"},
		{"view offset", "%w = buffer.view %buf[%x] : buffer -> view<4xf32>", "%w = buffer.view %buf[%o] : buffer -> view<4xf32>",
			"buffer.view: %x has type f32, the op takes an index or offset"},
		{"noalias of a scalar", "%u = buffer.assume.noalias %n : index", "%u = buffer.assume.noalias %buf : buffer",
			"buffer.assume.noalias: %n has type index, the op takes a buffer"},
		{"noalias results", "%u, %w = buffer.assume.noalias %buf : buffer", "%u = buffer.assume.noalias %buf : buffer",
			"buffer.assume.noalias: 2 results for 1 buffers"},
		{"load from a buffer", "%r = view.load %buf[%c0] : view<[%n]xf32> -> f32", "%r = view.load %view[%c0] : view<[%n]xf32> -> f32",
			"view.load: %buf has type buffer, the op takes a view"},
		{"float coordinate", "%r = view.load %view[%x] : view<[%n]xf32> -> f32", "%r = view.load %view[%n] : view<[%n]xf32> -> f32",
			"view.load: %x has type f32, the op takes an index coordinate"},
		{"stored value", "view.store %y, %view[%c0] : f32, view<[%n]xf32>", "view.store %x, %view[%c0] : f32, view<[%n]xf32>",
			"view.store: %y has type f64, the op takes f32"},
		{"loaded element", "%r = view.load %view[%c0] : view<[%n]xf32> -> f16", "%r = view.load %view[%c0] : view<[%n]xf32> -> f32",
			"view.load: result type f16, the op takes %view's element type f32"},
		{"stored element", "view.store %k, %view[%c0] : i32, view<[%n]xf32>", "view.store %x, %view[%c0] : f32, view<[%n]xf32>",
			"view.store: stored value of type i32, the op takes %view's element type f32"},
		{"written view type", "%r = view.load %view[%c0] : view<[%n]xf64> -> f64", "%r = view.load %view[%c0] : view<[%n]xf32> -> f32",
			"view.load: %view has type view<[%n]xf32>, the op is written for view<[%n]xf64>"},
		{"condition", "scf.if %k {\n  }", "scf.if %c {\n  }",
			"scf.if: %k has type i32, the op takes an i1 condition"},
		{"yield", "%r = scf.if %c -> (f32) {\n    scf.yield %n : index\n  } else {\n    scf.yield %x : f32\n  }",
			"%r = scf.if %c -> (f32) {\n    scf.yield %x : f32\n  } else {\n    scf.yield %x : f32\n  }",
			"scf.yield: %n has type index, the op takes f32"},
		{"yield count", "%r = scf.if %c -> (f32) {\n    scf.yield\n  } else {\n    scf.yield %x : f32\n  }",
			"%r = scf.if %c -> (f32) {\n    scf.yield %x : f32\n  } else {\n    scf.yield %x : f32\n  }",
			"scf.yield: 0 values for the 1 results of the scf.if"},
		{"result names", "%r = scf.if %c -> (f32, f32) {\n    scf.yield %x : f32\n  } else {\n    scf.yield %x : f32\n  }",
			"%r, %q = scf.if %c -> (f32, f32) {\n    scf.yield %x, %x : f32, f32\n  } else {\n    scf.yield %x, %x : f32, f32\n  }",
			"scf.if: 2 result types for 1 named results"},
		{"loop-carried init", "%r = scf.for %i = [%c0 to %n step %c1] (%s = %n : f32) -> (f32) {\n    scf.yield %s : f32\n  }",
			"%r = scf.for %i = [%c0 to %n step %c1] (%s = %x : f32) -> (f32) {\n    scf.yield %s : f32\n  }",
			"scf.for: %n has type index, the op takes f32"},
		{"loop bounds", "%r = scf.for %i = [%c0 to %k step %c1] {\n  }", "%r = scf.for %i = [%c0 to %n step %c1] {\n  }",
			"scf.for: %k has type i32, the op takes index"},
		{"call arguments", "%r = func.call @h(%x, %x) : (f32, f32) -> (f32)", "%r = func.call @h(%x, %k) : (f32, i32) -> (f32)",
			"func.call: %x has type f32, the op takes i32"},
		{"call arity", "%r = func.call @h(%x) : (f32) -> (f32)", "%r = func.call @h(%x, %k) : (f32, i32) -> (f32)",
			"func.call @h passes 1 arguments; @h takes 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseFile("t.loom", []byte(head+"  "+c.good+"\n  func.return\n}\n")); err != nil {
				t.Fatalf("well-typed form: %v", err)
			}
			_, err := ParseFile("t.loom", []byte(head+"  "+c.bad+"\n  func.return\n}\n"))
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want an ErrInvalid containing %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "t.loom:9:") && !strings.HasPrefix(err.Error(), "t.loom:10:") {
				t.Errorf("error not at the op's line: %v", err)
			}
		})
	}
}

// TestReturnCount checks func.return against the function's result list.
func TestReturnCount(t *testing.T) {
	_, err := ParseFile("t.loom", []byte("func.def @f(%x: f32) -> (f32, f32) {\n  func.return %x : f32\n}\n"))
	if err == nil || !strings.Contains(err.Error(), "t.loom:2:3: func.return: 1 values; @f returns 2") {
		t.Fatalf("got %v", err)
	}
}

// TestUnstatedTypesNotChecked: a value whose type the syntax does not
// pin down (an op the front end lays out generically) is not compared, so
// ops the parser types by default never produce false errors.
func TestUnstatedTypesNotChecked(t *testing.T) {
	src := "func.def @f(%b: buffer, %old: vector<4xf32>) -> (vector<4xf32>) {\n" +
		"  %z = index.constant 0 : offset\n" +
		"  %v = buffer.view %b[%z] : buffer -> view<16xf32>\n" +
		"  %m = vector.constant false : vector<4xi1>\n" +
		"  %r = vector.load.expand %v[0], %m, %old : view<16xf32>, vector<4xi1>, vector<4xf32>\n" +
		"  %s = vector.addf %r, %old : vector<4xf32>\n" +
		"  func.return %s : vector<4xf32>\n}\n"
	if _, err := ParseFile("t.loom", []byte(src)); err != nil {
		t.Fatal(err)
	}
}
