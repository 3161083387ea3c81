package ptx

import (
	"regexp"
	"strconv"
	"testing"
)

// TestBlockWordsPTX checks testdata/block_words.loom (TestGPUCorpus and
// TestGPUAlignedBuild run it against the CPU executor): in the aligned
// build, a vector<2xi16> or vector<4xi8> load bitcast to an i32 is the
// loaded word, and only the two 2-byte-aligned blocks, whose halves load
// apart, are put together, by a prmt; the activation index (4b + 2p +
// sel)·3 of every unrolled copy shares the register part sel·3, its
// constant part becoming an immediate byte offset.
func TestBlockWordsPTX(t *testing.T) {
	k := compileTestdataKernel(t, "block_words.loom", "block_words")
	text := k.AlignedPTX
	if text == "" {
		t.Fatal("no aligned build")
	}
	if err := wellFormed(text); err != nil {
		t.Fatal(err)
	}
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(text, -1)) }
	// The two blocks loaded as halves are put together by one prmt each;
	// the bytes' word leaves two partial ors (of lanes 0–1 and 0–2) that
	// no one reads and ptxas drops. Each aligned word would take an or.
	if n := count(`(?m)^\tprmt\.b32 %r\d+, %r\d+, %r\d+, 0x5410;`); n != 2 {
		t.Errorf("%d prmt of two halves, want 2:\n%s", n, text)
	}
	if n := count(`(?m)^\tor\.b32 `); n != 2+3*6 {
		t.Errorf("%d or.b32, want 20 (and W | W << 1, M and M | M << 1 in each copy):\n%s", n, text)
	}
	if n := count(`(?m)^\tld\.global\.b32 `); n != 5 {
		t.Errorf("%d word loads, want 5 (four aligned blocks and the bytes)", n)
	}
	// Each word load's register is what the xor chain reads: no repacking.
	words := map[string]bool{}
	for _, m := range regexp.MustCompile(`ld\.global\.b32 (%r\d+),`).FindAllStringSubmatch(text, -1) {
		words[m[1]] = true
	}
	moved := 0
	for _, m := range regexp.MustCompile(`mov\.b32 %r\d+, (%r\d+);`).FindAllStringSubmatch(text, -1) {
		if words[m[1]] {
			moved++
		}
	}
	if moved != 5 {
		t.Errorf("%d bitcasts take a loaded word as it is, want 5", moved)
	}
	// The bytes' low and high lanes zero-extend from their word (the last
	// word loaded): a mask and a shift of the loaded register, in the
	// extui and in the bitcast's lowering (left dead, above).
	var last string
	for _, m := range regexp.MustCompile(`ld\.global\.b32 (%r\d+),`).FindAllStringSubmatch(text, -1) {
		last = m[1]
	}
	if count(`and\.b32 %r\d+, `+regexp.QuoteMeta(last)+`, 255;`) != 2 || count(`shr\.u32 %r\d+, `+regexp.QuoteMeta(last)+`, 24;`) != 2 {
		t.Errorf("the bytes' lanes 0 and 3 do not zero-extend from their word %s", last)
	}
	// (4b + 2p)·3 words of 4 bytes past the shared part, b < 3, p < 2.
	for _, off := range []int{24, 48, 72, 96, 120} {
		if n := count(`add\.s64 %rd\d+, %rd\d+, ` + strconv.Itoa(off) + `;`); n != 1 {
			t.Errorf("%d address adds of the immediate %d, want 1", n, off)
		}
	}
	// The copies' register part: one register scaled by 3 in five copies
	// (the sixth has no constant part).
	parts := map[string]int{}
	for _, m := range regexp.MustCompile(`mul\.lo\.s32 %r\d+, (%r\d+), 3;`).FindAllStringSubmatch(text, -1) {
		parts[m[1]]++
	}
	if most := maxCount(parts); most != 5 {
		t.Errorf("at most %d copies scale one register part by 3, want 5: %v", most, parts)
	}
	// The sign fill B | B << 1 | B << 2 of disjoint bits is B·7, one
	// multiply a copy; W | W << 1 and M | M << 1, whose bits overlap,
	// stay ors (above).
	if n := count(`mul\.lo\.s32 %r\d+, %r\d+, 7;`); n != 6 {
		t.Errorf("%d sign fills as one multiply, want 6", n)
	}
}

func maxCount(m map[string]int) int {
	most := 0
	for _, n := range m {
		most = max(most, n)
	}
	return most
}

// TestHalvesSelector checks the prmt selector for each placement of two
// 16-bit fields, and that other fields get none.
func TestHalvesSelector(t *testing.T) {
	v := func(word string, lo, n, at int) *val {
		return &val{field: &bitField{word: word, lo: lo, n: n, at: at}}
	}
	for _, c := range []struct {
		x, y   *val
		lo, hi string
		sel    int
		ok     bool
	}{
		{v("%a", 0, 16, 0), v("%b", 0, 16, 16), "%a", "%b", 0x5410, true},
		{v("%b", 0, 16, 16), v("%a", 0, 16, 0), "%a", "%b", 0x5410, true},
		{v("%a", 16, 16, 0), v("%b", 16, 16, 16), "%a", "%b", 0x7632, true},
		{v("%a", 16, 16, 0), v("%a", 0, 16, 16), "%a", "%a", 0x5432, true},
		{v("%a", 0, 8, 0), v("%b", 0, 8, 8), "", "", 0, false},
		{v("%a", 8, 16, 0), v("%b", 0, 16, 16), "", "", 0, false},
		{v("%a", 0, 16, 0), v("%b", 0, 16, 0), "", "", 0, false},
		{v("%a", 0, 16, 0), &val{}, "", "", 0, false},
	} {
		lo, hi, sel, ok := halvesSelector(c.x, c.y)
		if ok != c.ok || ok && (lo != c.lo || hi != c.hi || sel != c.sel) {
			t.Errorf("%+v | %+v: %s %s %#x %v, want %s %s %#x %v", *c.x.field, c.y.field, lo, hi, sel, ok, c.lo, c.hi, c.sel, c.ok)
		}
	}
}
