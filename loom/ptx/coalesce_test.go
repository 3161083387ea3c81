package ptx

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestCoalesce(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"loop-carried sum folds into its join register",
			"$L_for_1:\n\t@%p1 bra $L_end_2;\n\tadd.rn.f32 %f3, %f1, %f2;\n\tmov.f32 %f1, %f3;\n\tbra.uni $L_for_1;\n$L_end_2:\n",
			"$L_for_1:\n\t@%p1 bra $L_end_2;\n\tadd.rn.f32 %f1, %f1, %f2;\n\tbra.uni $L_for_1;\n$L_end_2:\n"},
		{"a whole branch in between is fine",
			"\tfma.rn.f32 %f3, %f1, %f2, %f1;\n\t@%p1 bra $L_else_1;\n\tst.shared.f32 [%rd1], %f2;\n$L_else_1:\n\tbar.sync 0;\n\tmov.f32 %f1, %f3;\n",
			"\tfma.rn.f32 %f1, %f1, %f2, %f1;\n\t@%p1 bra $L_else_1;\n\tst.shared.f32 [%rd1], %f2;\n$L_else_1:\n\tbar.sync 0;\n"},
		{"a read of the join register in between blocks it",
			"\tadd.rn.f32 %f3, %f1, %f2;\n\tadd.rn.f32 %f4, %f1, %f2;\n\tmov.f32 %f1, %f3;\n\tmov.f32 %f2, %f4;\n",
			"\tadd.rn.f32 %f3, %f1, %f2;\n\tadd.rn.f32 %f2, %f1, %f2;\n\tmov.f32 %f1, %f3;\n"},
		{"swapped yields keep their temporaries",
			"\tmov.f32 %f3, %f2;\n\tmov.f32 %f4, %f1;\n\tmov.f32 %f1, %f3;\n\tmov.f32 %f2, %f4;\n",
			"\tmov.f32 %f3, %f2;\n\tmov.f32 %f2, %f1;\n\tmov.f32 %f1, %f3;\n"},
		{"a value read twice is kept",
			"\tadd.rn.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd1], %f3;\n\tmov.f32 %f1, %f3;\n",
			"\tadd.rn.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd1], %f3;\n\tmov.f32 %f1, %f3;\n"},
		{"a load and its predicated fallback both write the join register",
			"\t@%p1 ld.global.v2.f32 {%f3, %f4}, [%rd1];\n\t@!%p1 ld.global.f32 %f3, [%rd1];\n\t@!%p1 ld.global.f32 %f4, [%rd1+4];\n\tmov.f32 %f1, %f3;\n\tmov.f32 %f2, %f4;\n",
			"\t@%p1 ld.global.v2.f32 {%f1, %f2}, [%rd1];\n\t@!%p1 ld.global.f32 %f1, [%rd1];\n\t@!%p1 ld.global.f32 %f2, [%rd1+4];\n"},
		{"a write of the join register among the writes blocks it",
			"\tadd.rn.f32 %f3, %f1, %f2;\n\tmov.f32 %f1, %f2;\n\tadd.rn.f32 %f3, %f3, %f2;\n\tmov.f32 %f1, %f3;\n",
			"\tadd.rn.f32 %f3, %f1, %f2;\n\tmov.f32 %f1, %f2;\n\tadd.rn.f32 %f3, %f3, %f2;\n\tmov.f32 %f1, %f3;\n"},
		{"a loop between the definition and the copy is kept",
			"\tadd.rn.f32 %f3, %f1, %f2;\n$L_for_1:\n\tadd.rn.f32 %f2, %f2, %f2;\n\t@%p1 bra $L_for_1;\n\tmov.f32 %f1, %f3;\n",
			"\tadd.rn.f32 %f1, %f1, %f2;\n$L_for_1:\n\tadd.rn.f32 %f2, %f2, %f2;\n\t@%p1 bra $L_for_1;\n"},
		{"a copy inside a loop of a value from before it is kept",
			"\tadd.rn.f32 %f3, %f1, %f2;\n$L_for_1:\n\tmov.f32 %f5, %f3;\n\t@%p1 bra $L_for_1;\n",
			"\tadd.rn.f32 %f3, %f1, %f2;\n$L_for_1:\n\tmov.f32 %f5, %f3;\n\t@%p1 bra $L_for_1;\n"},
		{"a branch out of the stretch blocks it",
			"\tadd.rn.f32 %f3, %f1, %f2;\n\t@%p1 bra $L_out_1;\n\tmov.f32 %f1, %f3;\n$L_out_1:\n\tst.global.f32 [%rd1], %f1;\n",
			"\tadd.rn.f32 %f3, %f1, %f2;\n\t@%p1 bra $L_out_1;\n\tmov.f32 %f1, %f3;\n$L_out_1:\n\tst.global.f32 [%rd1], %f1;\n"},
		{"vector loads rename inside the braces",
			"\tld.shared.v2.f32 {%f3, %f4}, [%rd1];\n\tmov.f32 %f1, %f4;\n",
			"\tld.shared.v2.f32 {%f3, %f1}, [%rd1];\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := coalesce(c.in); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", strings.TrimSpace(got), strings.TrimSpace(c.want))
			}
		})
	}
}

// TestRegsAgreeWithPattern checks the register scanner against the
// regular expression it replaced, %[a-z]+[0-9]+\b, on random strings of
// the characters that matter to it, finding and renaming.
func TestRegsAgreeWithPattern(t *testing.T) {
	re := regexp.MustCompile(`%[a-z]+[0-9]+\b`)
	const alphabet = "%%%rdfp019_A,{}[]+ ;.\n"
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(b)
		got, want := regs(s), re.FindAllString(s, -1)
		if !slices.Equal(got, want) {
			t.Fatalf("regs(%q) = %q, want %q", s, got, want)
		}
		if len(want) == 0 {
			continue
		}
		from := want[rng.IntN(len(want))]
		wantLine := re.ReplaceAllStringFunc(s, func(x string) string {
			if x == from {
				return "%zz9"
			}
			return x
		})
		if got := renameReg(s, from, "%zz9"); got != wantLine {
			t.Fatalf("renameReg(%q, %q) = %q, want %q", s, from, got, wantLine)
		}
	}
}
