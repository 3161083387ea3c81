package loom

import (
	"strings"
	"testing"
	"time"
)

func kinds(toks []token) string {
	var parts []string
	for _, t := range toks {
		if t.kind == tEOF {
			break
		}
		parts = append(parts, t.kind.String()+":"+t.text)
	}
	return strings.Join(parts, " ")
}

// TestLexShapes covers the shape scanner: dims glued with x are separate
// tokens and 0xf32 is a shape, not a hex number.
func TestLexShapes(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"static 2-d", "view<4x8xf32>", "identifier:view '<':< integer:4 shape 'x':x integer:8 shape 'x':x identifier:f32 '>':>"},
		{"zero dim is not hex", "vector<0xf32>", "identifier:vector '<':< integer:0 shape 'x':x identifier:f32 '>':>"},
		{"dynamic dims", "view<[%m]x[%n]xf32>", "identifier:view '<':< '[':[ SSA value:%m ']':] shape 'x':x '[':[ SSA value:%n ']':] shape 'x':x identifier:f32 '>':>"},
		{"mixed", "tensor<16x[%N]xbf16>", "identifier:tensor '<':< integer:16 shape 'x':x '[':[ SSA value:%N ']':] shape 'x':x identifier:bf16 '>':>"},
		{"index elem", "vector<4xindex>", "identifier:vector '<':< integer:4 shape 'x':x identifier:index '>':>"},
		{"layout attr", "view<8xf32, #dense>", "identifier:view '<':< integer:8 shape 'x':x identifier:f32 ',':, attribute:#dense '>':>"},
		{"layout value", "view<8xf32, %enc>", "identifier:view '<':< integer:8 shape 'x':x identifier:f32 ',':, SSA value:%enc '>':>"},
		{"0-d", "vector<f32>", "identifier:vector '<':< identifier:f32 '>':>"},
		{"unknown dim", "tile<?x4xf16>", "identifier:tile '<':< '?':? shape 'x':x integer:4 shape 'x':x identifier:f16 '>':>"},
		{"hex outside shapes", "0xf32", "integer:0xf32"},
		{"op name not a shape", "view.load<volatile>", "identifier:view.load '<':< identifier:volatile '>':>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			toks, _, err := lex("t", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(toks); got != c.want {
				t.Errorf("\n got: %s\nwant: %s", got, c.want)
			}
		})
	}
}

// TestLexTokens covers the other lexical rules.
func TestLexTokens(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"arrow vs negative", "-> -1 -0.5 -2e-3", "'->':-> integer:-1 float:-0.5 float:-2e-3"},
		{"floats", "0.0 3.14159 1e5 .5", "float:0.0 float:3.14159 float:1e5 float:.5"},
		{"hex", "0x05040100", "integer:0x05040100"},
		{"dotted symbol", "@model.layer_count @a$b", "symbol:@model.layer_count symbol:@a$b"},
		{"ssa stops at colon", "%x:buffer", "SSA value:%x ':':: identifier:buffer"},
		{"attr with params", "#q8_0<block=32>", "attribute:#q8_0 '<':< identifier:block '=':= integer:32 '>':>"},
		{"dashed word", "gfx11-generic", "identifier:gfx11-generic"},
		{"comments dropped", "a // b c\nd", "identifier:a newline:\n identifier:d"},
		{"string", `"a\"b\u00e9"`, `string:"a\"b\u00e9"`},
		{"flags", "nnan|nsz", "identifier:nnan '|':| identifier:nsz"},
		{"asm body raw", "asm { v_add ; } x", "identifier:asm raw body:{ v_add ; } identifier:x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			toks, _, err := lex("t", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(toks); got != c.want {
				t.Errorf("\n got: %s\nwant: %s", got, c.want)
			}
		})
	}
}

// TestLexErrors checks messages and positions of lexical errors.
func TestLexErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"a\n  ~", "t:2:3: unexpected character '~'"},
		{`"abc`, "t:1:1: string literal not terminated"},
		{`"a\x"`, `t:1:1: invalid string literal: unknown escape \x`},
		{`"\u12"`, `t:1:1: invalid string literal: short \u escape`},
		{"12abc", `t:1:1: malformed number "12a"`},
		{"view<4y", "t:1:7: expected 'x' after shape dimension"},
		{"view<[4]xf32>", "t:1:7: expected %value in dynamic dimension"},
		{"asm {", "t:1:5: unclosed asm body"},
		{"%", `t:1:1: expected a name after '%'`},
	}
	for _, c := range cases {
		_, _, err := lex("t", []byte(c.src))
		if err == nil {
			t.Errorf("%q: no error, want %s", c.src, c.want)
			continue
		}
		if got := err.Error(); got != c.want {
			t.Errorf("%q:\n got: %s\nwant: %s", c.src, got, c.want)
		}
	}
}

// TestHostileInput feeds deep and long inputs; each must fail or pass
// quickly with a positioned error, never panic or hang.
func TestHostileInput(t *testing.T) {
	cases := map[string]string{
		"deep brackets": "kernel.decl @k() launch(" + strings.Repeat("(", 100000),
		"deep regions":  "func.def @f() {\n" + strings.Repeat("scf.if %c {\n", 1000),
		"deep angles":   "target.generic" + strings.Repeat("<", 50000) + " @t",
		"long line":     "kernel.decl @k() launch(" + strings.Repeat("%a: index, ", 50000) + ")",
		"many comments": strings.Repeat("// c\n", 100000) + "config.decl @x : index",
		"long ident":    strings.Repeat("a", 1<<20),
		"many brackets": strings.Repeat("[", 100000),
		"unclosed dict": "vendor.op {a = " + strings.Repeat("{", 300),
		"many shapes":   "kernel.decl @k() launch(%v: view<" + strings.Repeat("1x", 100000) + "f32>)",
		"nested attr":   "config.def @x = 1 : encoding<" + strings.Repeat("<", 300) + ">",
		"only newlines": strings.Repeat("\n", 100000),
		"huge hex":      "config.def @x = 0x1FFFFFFFFFFFFFFFF : i64",
		"neg dot":       "config.def @x = -.",
		"number at eof": "config.def @x = -",
		"shape at eof":  "kernel.decl @k() launch(%v: view<",
		"string at eof": "module.import \"",
		"symbol at eof": "kernel.decl @",
		"lookup at eof": "func.def @f(%s: index) {\n%a = scf.lookup %s { 0 = (",
		"switch at eof": "func.def @f(%s: index) {\nscf.switch %s {\ncase 1 {",
		"while at eof":  "func.def @f() {\n%r = scf.while(%a = ",
		"for at eof":    "func.def @f() {\nscf.for %i = [",
		"preds at eof":  "config.decl @x : %v: index where [range(%v,",
		"clause at eof": "func.def @f() {\nbuffer.alloca<workgroup> align(",
		"asm unclosed":  "low.func.def @f() asm { {",
		"cfg label":     "func.def @f() {\n^bb0(%x: i32):\n}",
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := ParseFile("h.loom", []byte(src))
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "h.loom:") {
				t.Errorf("error without position: %v", err)
			}
		})
	}
}
