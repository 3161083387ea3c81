package runtime

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentSession drives one session from many goroutines at once:
// each allocates, records and replays its own graph, runs fills directly
// and reads back, while they all share the session's kernels, staging
// buffer and recordings map. Run under -race it proves the documented
// promise that a Session is safe for concurrent use.
func TestConcurrentSession(t *testing.T) {
	s, fb := faultySession(2)
	fb.noHost = true // staged readback: the shared staging buffer is exercised
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				r, err := s.Allocate(256)
				if err != nil {
					return err
				}
				key := fmt.Sprint("g", g)
				for i := range 20 {
					v := uint32(g*1000 + i)
					if i == 0 {
						if err = s.Record(key, []Command{Fill{Region: r, Value: v}}); err == nil {
							err = s.Replay(key)
						}
					} else {
						err = s.Run([]Command{Fill{Region: r, Value: v}})
					}
					if err != nil {
						return err
					}
					if i == 10 {
						if err := s.Replay(key); err != nil {
							return err
						}
						v = uint32(g * 1000)
					}
					b, err := s.Read(r)
					if err != nil {
						return err
					}
					for j := 0; j < len(b); j += 4 {
						if got := binary.LittleEndian.Uint32(b[j:]); got != v {
							return fmt.Errorf("goroutine %d step %d: word %d = %d, want %d", g, i, j/4, got, v)
						}
					}
				}
				if !s.IsRecorded(key) {
					return fmt.Errorf("goroutine %d: %s not recorded", g, key)
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseReleasesEverything: Close hands every allocation, kernel and
// graph back to the backend, once, and a second Close does nothing.
func TestCloseReleasesEverything(t *testing.T) {
	s, fb := faultySession(1)
	r := must(s.Allocate(64))
	must(s.AllocateShared(8))
	must(s.Weight(make([]byte, 16)))
	must(s.Allocate(0))
	fakeKernel(s, "a")
	fakeKernel(s, "b")
	s.kernels[0].dev, s.kernels[1].dev = "k0", "k1" // backend handles to release
	if err := s.Record("one", []Command{Fill{Region: r}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Record("two", []Command{Fill{Region: r}, Fill{Region: r}}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if fb.freedMem != 4 || fb.freedKernels != 2 || fb.freedGraphs != 2 {
		t.Errorf("Close freed %d allocations, %d kernels, %d graphs; want 4, 2, 2", fb.freedMem, fb.freedKernels, fb.freedGraphs)
	}
}
