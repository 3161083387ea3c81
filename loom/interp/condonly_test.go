package interp

import (
	"encoding/binary"
	"testing"
)

// TestConditionAlsoReadByLookup: a comparison used as an scf.if condition and
// also as a value of an scf.lookup row must keep its lanes written, because
// the lookup reads them (only conditions used by scf.if alone may stay as a
// lane range).
func TestConditionAlsoReadByLookup(t *testing.T) {
	body := `  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %half = index.constant 5 : index
  %v = buffer.view %b[%z] : buffer -> view<[%n]xi32>
  %ok = index.cmp ult, %i, %half : index
  %one = scalar.constant 1 : i32
  %two = scalar.constant 2 : i32
  %no = scalar.constant false : i1
  scf.if %ok {
    view.store %one, %v[%i] : i32, view<[%n]xi32>
  }
  %picked = scf.lookup %c0 { 0 = (%ok) } default(%no) : i1
  %out = scf.select %picked, %one, %two : i32
  view.store %out, %v[%i] : i32, view<[%n]xi32>`
	const n = 10
	b := make([]byte, 4*n)
	if err := runInline(t, "%n: index, %b: buffer", body, grid(1, n), idx(n), buf(b)); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		got := int32(binary.LittleEndian.Uint32(b[4*i:]))
		want := int32(2)
		if i < 5 {
			want = 1
		}
		if got != want {
			t.Errorf("lane %d: %d, want %d", i, got, want)
		}
	}
}
