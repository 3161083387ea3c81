package checkrun

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
	loomrt "github.com/loomgen/loomgen/runtime"
)

// Status is the outcome of one sub-case.
type Status string

// Outcomes. ERROR is a case the runner cannot evaluate as written (a
// malformed op, a kernel that does not compile); FAIL an expectation or a
// kernel run that failed.
const (
	Pass  Status = "PASS"
	Fail  Status = "FAIL"
	Skip  Status = "SKIP"
	Error Status = "ERROR"
)

// Result is the outcome of one sub-case on one backend; its JSON form is
// what loomgen test -json prints.
type Result struct {
	Case    string        `json:"case"`
	Params  string        `json:"params"`
	Backend string        `json:"backend"`
	Status  Status        `json:"status"`
	Reason  string        `json:"reason,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Name is case[params].
func (r Result) Name() string {
	if r.Params == "" {
		return r.Case
	}
	return r.Case + "[" + r.Params + "]"
}

// Options configure a Runner.
type Options struct {
	// Backend is "cpu", "cuda", "hip" or "auto" (as runtime.Options).
	Backend string
	// Race runs every case in the CPU executor's checked mode, workgroup
	// and global races included; cases on a GPU are skipped.
	Race bool
	// Run selects sub-cases by their name (case[params]); nil runs all.
	Run *regexp.Regexp
	// Workers bounds the CPU executor's goroutines (0: GOMAXPROCS).
	Workers int
}

// Runner evaluates a suite's cases on one backend. It holds up to two
// sessions, opened on first use: a plain one, and a sanitized CPU one for
// cases that expect sanitizer events (or for all under Options.Race).
type Runner struct {
	suite   *Suite
	opts    Options
	backend string // the plain session's backend, once known
	plain   *session
	checked *session
}

// session is an open runtime session with the kernels compiled on it.
type session struct {
	s       *loomrt.Session
	kernels map[string]loomrt.Kernel
}

// NewRunner opens the backend (to learn its name) and returns a runner.
func NewRunner(s *Suite, opts Options) (*Runner, error) {
	r := &Runner{suite: s, opts: opts}
	if opts.Race {
		if opts.Backend != "" && opts.Backend != "cpu" && opts.Backend != "auto" {
			return nil, fmt.Errorf("-race needs the cpu backend (the sanitizer is the CPU executor's), not %s", opts.Backend)
		}
		r.backend = "cpu"
		return r, nil
	}
	ss, err := r.open(false)
	if err != nil {
		return nil, err
	}
	r.plain = ss
	r.backend = ss.s.Backend()
	return r, nil
}

// Backend names the backend the runner's plain cases run on.
func (r *Runner) Backend() string { return r.backend }

// Close closes the runner's sessions.
func (r *Runner) Close() error {
	var errs []error
	for _, ss := range []*session{r.plain, r.checked} {
		if ss != nil {
			errs = append(errs, ss.s.Close())
		}
	}
	r.plain, r.checked = nil, nil
	return errors.Join(errs...)
}

func (r *Runner) open(checked bool) (*session, error) {
	o := loomrt.Options{Backend: r.opts.Backend, Workers: r.opts.Workers}
	if checked {
		o.Backend = "cpu"
		o.Sanitize = interp.Sanitize{Races: true, GlobalRaces: true}
	}
	s, err := loomrt.Open(o)
	if err != nil {
		return nil, err
	}
	return &session{s: s, kernels: map[string]loomrt.Kernel{}}, nil
}

// session returns the session a sub-case runs on, reopening one a failed
// kernel left unusable.
func (r *Runner) session(checked bool) (*session, error) {
	p := &r.plain
	if checked || r.opts.Race {
		p = &r.checked
	}
	if *p == nil {
		ss, err := r.open(checked || r.opts.Race)
		if err != nil {
			return nil, err
		}
		*p = ss
	}
	return *p, nil
}

// drop closes a session a kernel failure left unusable.
func (r *Runner) drop(ss *session) {
	ss.s.Close()
	if r.plain == ss {
		r.plain = nil
	}
	if r.checked == ss {
		r.checked = nil
	}
}

// Instances lists the selected sub-cases of every case, in source order.
func (r *Runner) Instances() []*Instance {
	var out []*Instance
	for _, c := range r.suite.Cases {
		for _, in := range c.Instances() {
			if r.opts.Run == nil || r.opts.Run.MatchString(in.Name()) {
				out = append(out, in)
			}
		}
	}
	return out
}

// Run evaluates one sub-case.
func (r *Runner) Run(in *Instance) Result {
	res := Result{Case: in.Case.Name, Params: in.ParamString(), Backend: r.backend}
	start := time.Now()
	ev := r.newEval(in)
	st, reason := ev.run()
	res.Status, res.Reason, res.Elapsed = st, reason, time.Since(start)
	if ev.sess != nil && ev.sanitized {
		res.Backend = "cpu+sanitizer"
	}
	return res
}

// RunAll evaluates every selected sub-case.
func (r *Runner) RunAll() []Result {
	var out []Result
	for _, in := range r.Instances() {
		out = append(out, r.Run(in))
	}
	return out
}

// kernel returns the compiled kernel of symbol sym on ss.
func (r *Runner) kernel(ss *session, k *loom.Kernel) (loomrt.Kernel, error) {
	return r.compile(ss, k.Export, nil)
}

// compile returns the compiled kernel export of the suite's sources, plus
// extra (a wrapper the runner wrote) when given.
func (r *Runner) compile(ss *session, export string, extra *loomrt.Source) (loomrt.Kernel, error) {
	if h, ok := ss.kernels[export]; ok {
		return h, nil
	}
	srcs := r.suite.Sources
	if extra != nil {
		srcs = append(append([]loomrt.Source(nil), srcs...), *extra)
	}
	hs, err := ss.s.Compile([]loomrt.KernelSpec{{Sources: srcs, Export: export}})
	if err != nil {
		return loomrt.Kernel{}, err
	}
	ss.kernels[export] = hs[0]
	return hs[0], nil
}
