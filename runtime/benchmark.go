package runtime

import (
	"fmt"
	"slices"
	"time"
)

// minSamples is the fewest samples Benchmark and ProfileCommands accept:
// fewer make a p95 meaningless.
const minSamples = 10

// warmupPairs are the untimed graph/direct pairs run before measuring.
const warmupPairs = 10

// Distribution summarises timed samples by nearest rank.
type Distribution struct {
	Median  time.Duration
	P95     time.Duration
	Min     time.Duration
	Max     time.Duration
	Samples int
}

// BenchmarkResult compares replaying a recording with issuing the same
// commands directly.
type BenchmarkResult struct {
	Key    string
	Graph  Distribution
	Direct Distribution
	// Commands is the number of commands in the recording.
	Commands int
}

// Ratio is the median graph time over the median direct time.
func (r BenchmarkResult) Ratio() float64 {
	if r.Direct.Median == 0 {
		return 0
	}
	return float64(r.Graph.Median) / float64(r.Direct.Median)
}

// summarize sorts samples and takes nearest-rank percentiles: the p-th
// percentile is the ceil(p/100·n)-th smallest sample.
func summarize(samples []time.Duration) Distribution {
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return Distribution{}
	}
	rank := func(p int) time.Duration {
		r := (p*n + 99) / 100 // ceil(p·n/100)
		return s[max(r, 1)-1]
	}
	return Distribution{Median: rank(50), P95: rank(95), Min: s[0], Max: s[n-1], Samples: n}
}

// Benchmark times replaying the recording under key against issuing the same
// commands directly, each followed by a synchronize. Ten untimed pairs warm
// up first; then each sample runs one graph and one direct pass, alternating
// which goes first so neither always benefits from the other's warm caches.
func (s *Session) Benchmark(key string, samples int) (BenchmarkResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return BenchmarkResult{}, err
	}
	if samples < minSamples {
		return BenchmarkResult{}, fmt.Errorf("%w: benchmark %q: %d samples, need at least %d", ErrArgument, key, samples, minSamples)
	}
	rec, ok := s.graphs[key]
	if !ok {
		return BenchmarkResult{}, fmt.Errorf("%w: %q", ErrNotRecorded, key)
	}
	graph := func() error {
		if err := s.be.launchGraph(rec.dev); err != nil {
			return s.fail(fmt.Sprintf("benchmark %q: replay", key), err)
		}
		if err := s.be.synchronize(); err != nil {
			return s.fail(fmt.Sprintf("benchmark %q: synchronize", key), err)
		}
		return nil
	}
	direct := func() error {
		for i := range rec.nodes {
			if err := s.issue(rec.nodes, i); err != nil {
				return s.fail(fmt.Sprintf("benchmark %q: direct command %d", key, i), err)
			}
		}
		if err := s.be.synchronize(); err != nil {
			return s.fail(fmt.Sprintf("benchmark %q: synchronize", key), err)
		}
		return nil
	}
	timed := func(f func() error, into *[]time.Duration) error {
		t0 := time.Now()
		if err := f(); err != nil {
			return err
		}
		*into = append(*into, time.Since(t0))
		return nil
	}
	var discard, gs, ds []time.Duration
	for range warmupPairs {
		if err := timed(graph, &discard); err != nil {
			return BenchmarkResult{}, err
		}
		if err := timed(direct, &discard); err != nil {
			return BenchmarkResult{}, err
		}
	}
	for i := range samples {
		first, second := graph, direct
		fi, si := &gs, &ds
		if i%2 == 1 {
			first, second, fi, si = direct, graph, &ds, &gs
		}
		if err := timed(first, fi); err != nil {
			return BenchmarkResult{}, err
		}
		if err := timed(second, si); err != nil {
			return BenchmarkResult{}, err
		}
	}
	return BenchmarkResult{Key: key, Graph: summarize(gs), Direct: summarize(ds), Commands: len(rec.nodes)}, nil
}

// ProfileCommands times each command of the recording under key on its own
// (issued directly, then synchronized), samples times, after one untimed
// pass. It returns one Distribution per command in record order.
func (s *Session) ProfileCommands(key string, samples int) ([]Distribution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, err
	}
	if samples < minSamples {
		return nil, fmt.Errorf("%w: profile %q: %d samples, need at least %d", ErrArgument, key, samples, minSamples)
	}
	rec, ok := s.graphs[key]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotRecorded, key)
	}
	times := make([][]time.Duration, len(rec.nodes))
	for pass := -1; pass < samples; pass++ {
		for i := range rec.nodes {
			t0 := time.Now()
			if err := s.issue(rec.nodes[i:i+1], 0); err != nil { // alone: each is timed to its end
				return nil, s.fail(fmt.Sprintf("profile %q: command %d", key, i), err)
			}
			if err := s.be.synchronize(); err != nil {
				return nil, s.fail(fmt.Sprintf("profile %q: synchronize", key), err)
			}
			if pass >= 0 {
				times[i] = append(times[i], time.Since(t0))
			}
		}
	}
	out := make([]Distribution, len(rec.nodes))
	for i, t := range times {
		out[i] = summarize(t)
	}
	return out, nil
}
