package checkrun

import (
	"os"
	"testing"

	loomrt "github.com/loomgen/loomgen/runtime"
)

// RaceEnv names the environment variable that runs the generated tests in
// the CPU executor's checked mode when set to 1 (loomgen test -race is the
// command-line form).
const RaceEnv = "LOOM_CHECK_RACE"

// backends lists the backends the generated tests run on: cpu always, and
// the GPU backend "auto" finds, when it finds one.
func backends() []string {
	out := []string{"cpu"}
	s, err := loomrt.Open(loomrt.Options{Backend: "auto"})
	if err == nil {
		if b := s.Backend(); b != "cpu" {
			out = append(out, b)
		}
		s.Close()
	}
	return out
}

// Test runs every check.case of sources as subtests, backend/case[params]:
// on the CPU always and on the GPU when one is found. A skipped case is a
// skipped subtest with its reason; a failing one reports its diff. It is
// what the generated loom_check_test.go calls.
func Test(t *testing.T, sources []loomrt.Source) {
	t.Helper()
	suite, err := Load(sources)
	if err != nil {
		t.Fatal(err)
	}
	if len(suite.Cases) == 0 {
		t.Skip("no check.case in these sources")
	}
	race := os.Getenv(RaceEnv) == "1"
	for _, be := range backends() {
		t.Run(be, func(t *testing.T) {
			if race && be != "cpu" {
				t.Skipf("%s=1: the sanitizer runs on the cpu backend only", RaceEnv)
			}
			r, err := NewRunner(suite, Options{Backend: be, Race: race})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for _, in := range r.Instances() {
				t.Run(in.Name(), func(t *testing.T) {
					res := r.Run(in)
					switch res.Status {
					case Skip:
						t.Skip(res.Reason)
					case Fail, Error:
						t.Errorf("%s %s on %s: %s", res.Status, res.Name(), res.Backend, res.Reason)
					}
				})
			}
		})
	}
}

// Benchmark runs every check.benchmark of sources as sub-benchmarks,
// backend/benchmark/case[params], reporting ns/op and bytes/s.
func Benchmark(b *testing.B, sources []loomrt.Source) {
	suite, err := Load(sources)
	if err != nil {
		b.Fatal(err)
	}
	if len(suite.Benchmarks) == 0 {
		b.Skip("no check.benchmark in these sources")
	}
	for _, be := range backends() {
		b.Run(be, func(b *testing.B) {
			r, err := NewRunner(suite, Options{Backend: be})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			for _, bm := range suite.Benchmarks {
				for _, in := range bm.Instances() {
					b.Run(bm.Name+"/"+in.Name(), func(b *testing.B) {
						ev, st, reason := r.prepareBench(in)
						switch st {
						case Skip:
							b.Skip(reason)
						case Fail, Error:
							b.Fatalf("%s %s: %s", st, in.Name(), reason)
						}
						timeCalls(b, ev)
					})
				}
			}
		})
	}
}
