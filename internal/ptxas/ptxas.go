// Package ptxas assembles PTX text with NVIDIA's assembler, where one is
// installed, so tests can check generated PTX without a GPU: ptxas checks
// operand types, instruction forms and the ISA version and target each
// instruction needs, which a text check cannot.
package ptxas

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
)

// ErrTooOld marks a module whose ISA version or target the ptxas at hand
// predates (CUDA 11.8's knows neither ISA 8.0 nor sm_90a).
var ErrTooOld = errors.New("ptxas predates the module's PTX ISA version or target")

// Find returns the ptxas to use: $LOOM_PTXAS, else one on PATH; "" with a
// nil error when there is none. A $LOOM_PTXAS that does not run is an
// error: it was asked for.
func Find() (string, error) {
	p := os.Getenv("LOOM_PTXAS")
	if p == "" {
		p, _ = exec.LookPath("ptxas")
		return p, nil
	}
	if err := Runs(p); err != nil {
		return "", fmt.Errorf("LOOM_PTXAS: %w", err)
	}
	return p, nil
}

// Runs says whether the ptxas at path answers --version.
func Runs(path string) error {
	if out, err := exec.Command(path, "--version").CombinedOutput(); err != nil {
		return fmt.Errorf("%s does not run: %v %s", path, err, bytes.TrimSpace(out))
	}
	return nil
}

var headerRE = regexp.MustCompile(`(?m)^\.version (\d+\.\d+)\n\.target (sm_\w+)\n`)

// Header is the .version and .target of module text ("" without them).
func Header(text string) (version, target string) {
	if m := headerRE.FindStringSubmatch(text); m != nil {
		return m[1], m[2]
	}
	return "", ""
}

// Assemble runs ptxas on text, for the target its header names, in dir.
// It returns ptxas's messages on failure, wrapping ErrTooOld where ptxas
// does not know the module's ISA version or target.
func Assemble(ptxas, dir, text string) error {
	_, target := Header(text)
	if target == "" {
		return errors.New("no .version/.target header")
	}
	f := filepath.Join(dir, "k.ptx")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		return err
	}
	var out bytes.Buffer
	cmd := exec.Command(ptxas, "-arch="+target, "-o", filepath.Join(dir, "k.cubin"), f)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if strings.Contains(msg, "Unsupported .version") || strings.Contains(msg, "is not defined for option 'gpu-name'") {
			return fmt.Errorf("%w: %s", ErrTooOld, msg)
		}
		return fmt.Errorf("%v: %s", err, msg)
	}
	return nil
}

// Module is one module text to assemble, named for messages.
type Module struct{ Name, Text string }

// BuildNames name a compiled kernel's builds, in the order Builds takes
// them (loom/ptx.Kernel's PTX, AlignedPTX, CappedPTX, CappedAlignedPTX).
var BuildNames = [4]string{"versioned", "aligned", "capped", "capped aligned"}

// Builds lists a kernel's builds that exist (texts in BuildNames' order,
// "" for one it lacks) as modules named "name (build)".
func Builds(name string, texts [4]string) []Module {
	var out []Module
	for i, text := range texts {
		if text != "" {
			out = append(out, Module{Name: name + " (" + BuildNames[i] + ")", Text: text})
		}
	}
	return out
}

// Result counts what AssembleAll did.
type Result struct {
	// Assembled modules passed; TooOld ones need a newer ptxas.
	Assembled, TooOld int
	// Failed names each module ptxas rejected, with its messages.
	Failed []error
}

// AssembleAll assembles every module, one ptxas process a core (it takes
// most of a second on the larger kernels), with scratch files under dir.
func AssembleAll(ptxas, dir string, mods []Module) Result {
	errs := make([]error, len(mods))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := os.MkdirTemp(dir, "")
			for i := range next {
				if errs[i] = err; err == nil {
					errs[i] = Assemble(ptxas, d, mods[i].Text)
				}
			}
		}()
	}
	for i := range mods {
		next <- i
	}
	close(next)
	wg.Wait()
	var r Result
	for i, err := range errs {
		switch {
		case errors.Is(err, ErrTooOld):
			r.TooOld++
		case err != nil:
			r.Failed = append(r.Failed, fmt.Errorf("%s: ptxas: %w", mods[i].Name, err))
		default:
			r.Assembled++
		}
	}
	return r
}
