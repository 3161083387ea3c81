// Package hrxsamples finds the self-checking functions of Loom's own tests
// (the hrx-system snapshot's .loom-test files, extracted under Dir when
// they are; they are not part of this repository) and wraps one in a
// one-invocation kernel that stores its results, so an executor can run it
// and compare with the value the test states.
package hrxsamples

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"

	"github.com/loomgen/loomgen/internal/loomcorpus"
)

// Dir is where the snapshot's .loom and .loom-test files are extracted:
// $LOOM_HRX_DIR, else /tmp/hrx (a GPU machine gets a copy elsewhere).
var Dir = cmp.Or(os.Getenv("LOOM_HRX_DIR"), "/tmp/hrx")

var (
	// sampleFuncRE finds an argument-less func.def and its result list.
	sampleFuncRE = regexp.MustCompile(`(?m)^func\.def @(\w+)\(\) -> \(([^()]*)\) \{`)
	// constLineRE is a body line of a fully folded function.
	constLineRE = regexp.MustCompile(`^\s*(%\w+ = (scalar|index|vector)\.constant .*|func\.return( .*)?|\}|)$`)
	// valuelessLineRE is a line of an expected form that does not bear on
	// the returned values: an encoding kept alive by a test.use sink. Such
	// lines are blanked before the expected form runs.
	valuelessLineRE = regexp.MustCompile(`(?m)^\s*(test\.use .*|%\w+ = encoding\.define .*)$`)
)

// A Check is one argument-less function of Loom's own tests whose value
// the test states: an i1 "sample" of a verify case must be true, and a
// function of a canonicalize case whose expected form is only constants
// must return those constants.
type Check struct {
	Where   string // file:line of the case
	Name    string
	Results []string // result types
	Input   string   // the case's input, positions kept
	Want    string   // expected section (canonicalize), "" for a verify sample
	// Rewritten: the expected form is not only constants, so the check is
	// that the function and its canonical form agree (a weaker check).
	Rewritten bool
	File      string // the file's path, for positions
}

// Find lists the self-checking functions of the corpus under dir and, for
// the argument-less functions it cannot compare, why.
func Find(dir string) (checks []Check, skipped map[string]string, err error) {
	files, err := loomcorpus.Files([]string{dir})
	if err != nil {
		return nil, nil, err
	}
	skipped = map[string]string{}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		if !strings.HasSuffix(path, ".loom-test") {
			continue // plain .loom files state no expected values
		}
		for _, c := range loomcorpus.SplitTest(string(src)) {
			where := fmt.Sprintf("%s:%d", strings.TrimPrefix(path, dir+"/"), c.Line)
			for _, m := range sampleFuncRE.FindAllStringSubmatch(c.Input, -1) {
				key := where + " @" + m[1]
				results := strings.Split(m[2], ", ")
				switch {
				case c.Excluded != "":
					skipped[key] = "case expects Loom to reject it: " + c.Excluded
				case c.Mode == "verify":
					if m[2] != "i1" {
						skipped[key] = "verify case states no value for a non-i1 function"
						continue
					}
					checks = append(checks, Check{Where: where, Name: m[1], Results: results,
						Input: strings.Repeat("\n", c.Line-1) + c.Input, File: path})
				case c.Mode == "pass":
					exp := expectedBody(c.Expected, m[1])
					if exp == "" {
						skipped[key] = "no expected form of the function"
						continue
					}
					checks = append(checks, Check{Where: where, Name: m[1], Results: results, Rewritten: !folded(exp),
						Input: strings.Repeat("\n", c.Line-1) + c.Input, File: path,
						Want: strings.Repeat("\n", c.ExpectedLine-1) + valuelessLineRE.ReplaceAllString(c.Expected, "")})
				default:
					skipped[key] = "mode " + c.Mode + " states no value"
				}
			}
		}
	}
	return checks, skipped, nil
}

// expectedBody returns func.def @name's text in the expected section, or "".
func expectedBody(expected, name string) string {
	i := strings.Index(expected, "func.def @"+name+"(")
	if i < 0 {
		return ""
	}
	rest := expected[i:]
	if j := strings.Index(rest, "\n}"); j >= 0 {
		return rest[:j+2]
	}
	return ""
}

// folded says whether a function's body is only constants and its return.
func folded(fn string) bool {
	lines := strings.Split(fn, "\n")
	for _, l := range lines[1:] {
		if !constLineRE.MatchString(l) && !valuelessLineRE.MatchString(l) {
			return false
		}
	}
	return true
}

// Probe says whether a function queries test.fact_* analysis
// probes: their values are what an analysis proves, and ours (LOOM.md
// 11.5) is syntactic, so a weaker answer than Loom's is a precision
// difference, not wrong semantics.
func Probe(input, name string) bool {
	return strings.Contains(expectedBody(input, name), "test.fact_")
}

// Mismatch compares results lane by lane: integers bitwise, floats
// as numbers (±0 differ, any NaN equals any NaN).
func Mismatch(types []string, got, want [][]byte) string {
	for i, typ := range types {
		st, _ := parseSampleType(typ)
		size := len(got[i]) / max(st.count(), 1)
		for j := 0; j+size <= len(got[i]); j += size {
			g, w := got[i][j:j+size], want[i][j:j+size]
			if sameSampleLane(st.elem, g, w) {
				continue
			}
			return fmt.Sprintf("result %d (%s) lane %d: got %s, want %s", i, typ, j/size, showSample(st.elem, g), showSample(st.elem, w))
		}
	}
	return ""
}

func sameSampleLane(elem string, g, w []byte) bool {
	switch elem {
	case "f32":
		gf := math.Float32frombits(binary.LittleEndian.Uint32(g))
		wf := math.Float32frombits(binary.LittleEndian.Uint32(w))
		return gf == wf && math.Signbit(float64(gf)) == math.Signbit(float64(wf)) || gf != gf && wf != wf
	case "f64":
		gf := math.Float64frombits(binary.LittleEndian.Uint64(g))
		wf := math.Float64frombits(binary.LittleEndian.Uint64(w))
		return gf == wf && math.Signbit(gf) == math.Signbit(wf) || gf != gf && wf != wf
	}
	return bytes.Equal(g, w)
}

func showSample(elem string, b []byte) string {
	switch elem {
	case "f32":
		return fmt.Sprint(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case "f64":
		return fmt.Sprint(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case "f16":
		return fmt.Sprintf("f16 0x%04x", binary.LittleEndian.Uint16(b))
	}
	var v int64
	switch len(b) {
	case 1:
		v = int64(int8(b[0]))
	case 2:
		v = int64(int16(binary.LittleEndian.Uint16(b)))
	case 4:
		v = int64(int32(binary.LittleEndian.Uint32(b)))
	case 8:
		v = int64(binary.LittleEndian.Uint64(b))
	}
	return fmt.Sprint(v)
}

// sampleType is a result type the wrapper can store: a scalar (lanes 0)
// or a 1-D static vector.
type sampleType struct {
	elem  string
	lanes int
}

func (t sampleType) count() int { return max(t.lanes, 1) }

var vectorTypeRE = regexp.MustCompile(`^vector<(\d+)x(\w+)>$`)

// parseSampleType reads a result type; ok is false for types the wrapper
// cannot store (multi-dimensional or dynamic vectors, encodings).
func parseSampleType(typ string) (sampleType, bool) {
	st := sampleType{elem: typ}
	if m := vectorTypeRE.FindStringSubmatch(typ); m != nil {
		st.elem, st.lanes = m[2], 0
		fmt.Sscan(m[1], &st.lanes)
		if st.lanes == 0 || st.elem == "index" || st.elem == "offset" {
			return st, false
		}
	}
	switch st.elem {
	case "i1", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "index", "offset":
		return st, true
	}
	return st, false
}

// sampleStore is how a result of type typ is stored: the stored element
// type and the conversion op ("" for none; %s is the result).
func sampleStore(st sampleType) (stored, conv string) {
	switch st.elem {
	case "i1":
		if st.lanes > 0 {
			return "i32", fmt.Sprintf("vector.extui %%s : vector<%dxi1> to vector<%dxi32>", st.lanes, st.lanes)
		}
		return "i32", "scalar.extui %s : i1 to i32"
	case "index", "offset":
		return "i64", "index.cast %s : " + st.elem + " to i64"
	}
	return st.elem, ""
}

var sampleBytes = map[string]int{"i8": 1, "i16": 2, "f16": 2, "i32": 4, "f32": 4, "i64": 8, "f64": 8}

// Wrap appends to src a one-invocation kernel, export "sample", that
// calls func.def @name and stores result i into buffer argument i; sizes
// are those buffers' byte sizes.
func Wrap(src, name string, results []string) (text string, sizes []int, err error) {
	var params, views, stores, rets []string
	sizes = make([]int, len(results))
	for i, typ := range results {
		st, ok := parseSampleType(typ)
		if !ok {
			return "", nil, fmt.Errorf("cannot store a %s result: %w", typ, ErrType)
		}
		stored, conv := sampleStore(st)
		sizes[i] = sampleBytes[stored] * st.count()
		params = append(params, fmt.Sprintf("%%d%d: buffer", i))
		rets = append(rets, fmt.Sprintf("%%r%d", i))
		views = append(views, fmt.Sprintf("  %%v%d = buffer.view %%d%d[%%z] : buffer -> view<%dx%s>", i, i, st.count(), stored))
		val := fmt.Sprintf("%%r%d", i)
		if conv != "" {
			stores = append(stores, fmt.Sprintf("  %%s%d = "+conv, i, val))
			val = fmt.Sprintf("%%s%d", i)
		}
		if st.lanes > 0 {
			stores = append(stores, fmt.Sprintf("  vector.store %s, %%v%d[%%c0] : vector<%dx%s>, view<%dx%s>", val, i, st.lanes, stored, st.lanes, stored))
		} else {
			stores = append(stores, fmt.Sprintf("  view.store %s, %%v%d[%%c0] : %s, view<1x%s>", val, i, stored, stored))
		}
	}
	wrapper := fmt.Sprintf(`
kernel.def export("sample") @sample__() {
  %%c1 = index.constant 1 : index
  kernel.launch.config workgroups(%%c1, %%c1, %%c1) workgroup_size(%%c1, %%c1, %%c1) : index
} launch(%s) {
  %%z = index.constant 0 : offset
  %%c0 = index.constant 0 : index
%s
  %s = func.call @%s() : () -> (%s)
%s
  kernel.return
}
`, strings.Join(params, ", "), strings.Join(views, "\n"), strings.Join(rets, ", "), name,
		strings.Join(results, ", "), strings.Join(stores, "\n"))
	return src + wrapper, sizes, nil
}

// ErrType marks a result type the wrapper cannot store.
var ErrType = errors.New("result type not handled by the sample wrapper")

// Counts tallies a run of the checks on one executor.
type Counts struct {
	Agree     int // results equal the stated value
	AgreeForm int // equal what the (non-constant) canonical form returns
	Disagree  int // differ, or the executor failed
	Weaker    int // test.fact probe answers less precise than Loom's
	Cannot    int // the function or its expected form cannot run there
}

func (n Counts) String() string {
	return fmt.Sprintf("%d agree with the stated value, %d with their (non-constant) canonical form, %d disagree, %d probe answers less precise than Loom's, %d cannot run",
		n.Agree, n.AgreeForm, n.Disagree, n.Weaker, n.Cannot)
}

// Reporter is where Compare reports (a *testing.T).
type Reporter interface {
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// Compare runs every check on one executor and compares with the value
// the test states: true for a verify sample, else what the expected form
// returns on the same executor (so the constants are read by our parser
// exactly as a kernel's would be). run runs func.def @c.Name of src
// through Wrap's kernel and returns its result buffers; cannot says
// whether an error means the function cannot run there, and why.
// Disagreements and other errors go to r.Errorf, the rest to r.Logf.
func Compare(r Reporter, checks []Check, run func(c Check, src string) ([][]byte, error), cannot func(error) (string, bool)) Counts {
	var n Counts
	// try runs src, counting and reporting a failure; what names it.
	try := func(c Check, src, what string) ([][]byte, bool) {
		out, err := run(c, src)
		if err == nil {
			return out, true
		}
		if why, ok := cannot(err); ok {
			r.Logf("cannot run %s%s @%s: %s", what, c.Where, c.Name, why)
			n.Cannot++
		} else {
			r.Errorf("%s%s @%s: %v", what, c.Where, c.Name, err)
			n.Disagree++
		}
		return nil, false
	}
	for _, c := range checks {
		got, ok := try(c, c.Input, "")
		if !ok {
			continue
		}
		want := [][]byte{{1, 0, 0, 0}} // an i1 sample must be true
		if c.Want != "" {
			if want, ok = try(c, c.Want, "the expected form of "); !ok {
				continue
			}
		}
		switch why := Mismatch(c.Results, got, want); {
		case why != "" && Probe(c.Input, c.Name):
			r.Logf("probe precision %s @%s: %s", c.Where, c.Name, why)
			n.Weaker++
		case why != "":
			r.Errorf("%s @%s: %s", c.Where, c.Name, why)
			n.Disagree++
		case c.Rewritten:
			n.AgreeForm++
		default:
			n.Agree++
		}
	}
	return n
}
