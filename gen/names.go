package gen

import (
	"go/token"
	"strings"
	"unicode"
)

// splitWords breaks a Loom name (an export name, a config key or an SSA
// name) into the words a Go name is built from. Any character that cannot
// appear in a Go identifier separates words, and so does a lower-to-upper
// case change, so "scale_f32", "scale.f32" and "scaleF32" all give
// ["scale" "f32"] and convert to the same Go name; collisions among such
// spellings are resolved by the caller.
func splitWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if unicode.IsUpper(r) && prev != 0 && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
				flush()
			}
			cur = append(cur, r)
			prev = r
		default:
			flush()
			prev = 0
		}
	}
	flush()
	return words
}

// commonInitialisms are spelled in capitals inside exported Go names, the
// way golint and the standard library spell them (ID, URL, GPU).
var commonInitialisms = map[string]bool{
	"id": true, "gpu": true, "cpu": true, "api": true, "url": true, "json": true,
	"simd": true,
}

// exportedName converts a Loom name to an exported Go identifier:
// "scale_f32" → "ScaleF32", "demo.rows" → "DemoRows", "layer_id" → "LayerID".
// A name with no usable characters becomes "K"; one starting with a digit
// gets a "K" prefix so it stays an identifier.
func exportedName(s string) string {
	var b strings.Builder
	for _, w := range splitWords(s) {
		lw := strings.ToLower(w)
		if commonInitialisms[lw] {
			b.WriteString(strings.ToUpper(lw))
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]))
		b.WriteString(w[1:])
	}
	name := b.String()
	if name == "" || unicode.IsDigit(rune(name[0])) {
		name = "K" + name
	}
	return name
}

// paramName converts a Loom SSA name to an unexported Go parameter name:
// "element_count" → "elementCount", "N" → "n", "0" → "v0". Keywords and
// predeclared identifiers get a trailing underscore so that they neither fail
// to parse nor shadow the builtins the generated body uses.
func paramName(s string) string {
	words := splitWords(s)
	var b strings.Builder
	for i, w := range words {
		if i == 0 {
			b.WriteString(strings.ToLower(w))
			continue
		}
		lw := strings.ToLower(w)
		if commonInitialisms[lw] {
			b.WriteString(strings.ToUpper(lw))
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]))
		b.WriteString(w[1:])
	}
	name := b.String()
	if name == "" || unicode.IsDigit(rune(name[0])) {
		name = "v" + name
	}
	if token.IsKeyword(name) || predeclared[name] || reservedLocals[name] {
		name += "_"
	}
	return name
}

// predeclared lists Go's predeclared identifiers; a parameter spelled like
// one would shadow it inside the generated method.
var predeclared = map[string]bool{
	"any": true, "append": true, "bool": true, "byte": true, "cap": true, "clear": true,
	"close": true, "comparable": true, "complex": true, "complex128": true, "complex64": true,
	"copy": true, "delete": true, "error": true, "false": true, "float32": true, "float64": true,
	"imag": true, "int": true, "int16": true, "int32": true, "int64": true, "int8": true,
	"iota": true, "len": true, "make": true, "max": true, "min": true, "new": true, "nil": true,
	"panic": true, "print": true, "println": true, "real": true, "recover": true, "rune": true,
	"string": true, "true": true, "uint": true, "uint16": true, "uint32": true, "uint64": true,
	"uint8": true, "uintptr": true,
}

// reservedLocals are names the generated methods use themselves: the
// receiver, the imported packages and the locals of Dispatch.
var reservedLocals = map[string]bool{
	"k": true, "fmt": true, "loomrt": true, "math": true, "bits": true, "strconv": true,
	"errors": true, "d": true, "err": true, "need": true, "span": true,
	"groupsX": true, "groupsY": true, "groupsZ": true, "sizeX": true, "sizeY": true, "sizeZ": true,
}

// uniqueNamer hands out names that are unique within one scope. A wanted
// name that is taken gets the smallest numeric suffix that is free, so the
// result depends only on the order of requests — which callers keep
// deterministic (source order, or sorted).
type uniqueNamer struct {
	taken map[string]bool
}

func newUniqueNamer(reserved ...string) *uniqueNamer {
	u := &uniqueNamer{taken: map[string]bool{}}
	for _, r := range reserved {
		u.taken[r] = true
	}
	return u
}

// name returns want, or want followed by a number when want is taken, and
// marks the result taken.
func (u *uniqueNamer) name(want string) string {
	got := want
	sep := ""
	if want != "" && want[len(want)-1] >= '0' && want[len(want)-1] <= '9' {
		sep = "_" // ScaleF32_2, not ScaleF322
	}
	for i := 2; u.taken[got]; i++ {
		got = want + sep + itoa(i)
	}
	u.taken[got] = true
	return got
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var buf [20]byte
	n := len(buf)
	for i > 0 {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
	}
	return string(buf[n:])
}
