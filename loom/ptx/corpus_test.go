package ptx

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// corpusFiles lists the Loom sources every backend must handle: the
// analysis corpus and the example model's kernels.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "*.loom"))
	if err != nil {
		t.Fatal(err)
	}
	own, err := filepath.Glob(filepath.Join("testdata", "*.loom"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, own...)
	files = append(files, filepath.Join("..", "..", "examples", "gen", "kernels", "mlp.loom"))
	sort.Strings(files)
	return files
}

func parse(t testing.TB, path string) *loom.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loom.ParseFile(path, src)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return m
}

// testConfig supplies values for the config symbols the corpus declares.
func testConfig(m *loom.Module) map[string]loom.Const {
	cfg := map[string]loom.Const{}
	for _, d := range m.ConfigDecls {
		if d.Type == nil || !d.Type.IsScalar() {
			continue
		}
		c := loom.Const{Type: d.Type, Int: 64}
		if d.Type.Kind == loom.TypeInt && d.Type.Bits == 1 {
			c.Int = 0
		}
		cfg[d.Symbol] = c
	}
	return cfg
}

var posRE = regexp.MustCompile(`\.loom:\d+:\d+: `)

// TestCorpusCompilesOrRefuses compiles every kernel of the corpus: each
// either yields well-formed PTX or fails with ErrUnsupported naming the op
// and its position — never another error, never a panic.
func TestCorpusCompilesOrRefuses(t *testing.T) {
	compiled, refused := 0, 0
	for _, path := range corpusFiles(t) {
		m := parse(t, path)
		for _, kd := range m.Kernels {
			if kd.Decl {
				continue
			}
			k, err := Compile([]*loom.Module{m}, kd.Export, Options{Config: testConfig(m)})
			name := filepath.Base(path) + "/" + kd.Export
			if err != nil {
				if !errors.Is(err, ErrUnsupported) {
					t.Errorf("%s: want ErrUnsupported or success, got %v", name, err)
					continue
				}
				if !posRE.MatchString(err.Error()) {
					t.Errorf("%s: error lacks a file:line:col position: %v", name, err)
				}
				t.Logf("refused %s: %v", name, err)
				refused++
				continue
			}
			if err := wellFormed(k.PTX); err != nil {
				t.Errorf("%s: malformed PTX: %v\n%s", name, err, k.PTX)
			}
			compiled++
		}
	}
	t.Logf("%d kernels compiled, %d refused", compiled, refused)
	if compiled == 0 {
		t.Fatal("no kernel compiled")
	}
}

var (
	regDeclRE = regexp.MustCompile(`\.reg \.\w+ (%[a-z]+)<(\d+)>;`)
	regUseRE  = regexp.MustCompile(`%([a-z]+)(\d+)\b`)
	labelRE   = regexp.MustCompile(`(?m)^(\$L_\w+):$`)
	braRE     = regexp.MustCompile(`bra(?:\.uni)? (\$L_\w+);`)
)

// wellFormed checks what can be checked without ptxas: the header,
// balanced braces, every register used is declared, and every branch
// target is a label.
func wellFormed(src string) error {
	for _, h := range []string{".version ", ".target sm_", ".address_size 64", ".visible .entry "} {
		if !strings.Contains(src, h) {
			return errors.New("missing " + h)
		}
	}
	depth := 0
	for _, r := range src {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
			if depth < 0 {
				return errors.New("unbalanced }")
			}
		}
	}
	if depth != 0 {
		return errors.New("unbalanced {")
	}
	declared := map[string]int{}
	for _, m := range regDeclRE.FindAllStringSubmatch(src, -1) {
		n := 0
		for _, c := range m[2] {
			n = n*10 + int(c-'0')
		}
		declared[m[1]] = n
	}
	for _, m := range regUseRE.FindAllStringSubmatch(src, -1) {
		prefix := "%" + m[1]
		if prefix == "%tid" || prefix == "%ntid" || prefix == "%ctaid" || prefix == "%nctaid" || prefix == "%laneid" {
			continue
		}
		n := 0
		for _, c := range m[2] {
			n = n*10 + int(c-'0')
		}
		if lim, ok := declared[prefix]; !ok || n >= lim {
			return errors.New("undeclared register " + m[0])
		}
	}
	labels := map[string]bool{}
	for _, m := range labelRE.FindAllStringSubmatch(src, -1) {
		if labels[m[1]] {
			return errors.New("duplicate label " + m[1])
		}
		labels[m[1]] = true
	}
	for _, m := range braRE.FindAllStringSubmatch(src, -1) {
		if !labels[m[1]] {
			return errors.New("branch to unknown label " + m[1])
		}
	}
	return nil
}
