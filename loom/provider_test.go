package loom

import (
	"errors"
	"strings"
	"testing"
)

const providerSrc = `template.decl @fam(%n: index) -> (index)
template.def<@fam> priority(1) @small(%n: index) -> (index) where [lt(%n, 64)] {
  template.return %n : index
}
template.def<@fam> priority(2) @big(%n: index) -> (index) where [ge(%n, 64)] {
  template.return %n : index
}
template.def<@fam> @any(%n: index) -> (index) {
  template.return %n : index
}
template.decl @tied(%n: index) -> (index)
template.def<@tied> @t1(%n: index) -> (index) {
  template.return %n : index
}
template.def<@tied> @t2(%n: index) -> (index) {
  template.return %n : index
}
`

func TestSelectProvider(t *testing.T) {
	m, err := ParseFile("p.loom", []byte(providerSrc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProgram(m)
	if err != nil {
		t.Fatal(err)
	}
	known := func(v int64) func(int) (int64, bool) {
		return func(int) (int64, bool) { return v, true }
	}
	unknown := func(int) (int64, bool) { return 0, false }
	for _, tc := range []struct {
		name, fam string
		arg       func(int) (int64, bool)
		want      string // provider symbol, or an error fragment after "!"
	}{
		{"small argument takes the lt provider", "fam", known(3), "small"},
		{"large argument takes the ge provider over the default", "fam", known(100), "big"},
		{"unknown argument leaves only the unconditional provider", "fam", unknown, "any"},
		{"equal priorities tie", "tied", known(1), "!tie at priority 0"},
		{"no providers", "missing", known(1), "!no visible provider of missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := SelectProvider(tc.fam, p.Providers(tc.fam), tc.arg)
			if frag, isErr := strings.CutPrefix(tc.want, "!"); isErr {
				if !errors.Is(err, ErrNoProvider) || !strings.Contains(err.Error(), frag) {
					t.Fatalf("err = %v, want ErrNoProvider containing %q", err, frag)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Symbol != tc.want {
				t.Fatalf("picked %s, want %s", f.Symbol, tc.want)
			}
		})
	}
}
