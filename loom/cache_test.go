package loom

import (
	"errors"
	"strings"
	"testing"
)

// TestCachePolicyCheck checks the checker applies Loom's cache-policy
// rules (ops/cache.c) to every memory op that carries one, with the
// attribute's position.
func TestCachePolicyCheck(t *testing.T) {
	const tmpl = `func.def @f(%b: buffer, %x: f32, %v: vector<4xi32>, %o: vector<4xindex>) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %fv = buffer.view %b[%z] : buffer -> view<16xf32>
  %iv = buffer.view %b[%z] : buffer -> view<16xi32>
  OP
  func.return
}
`
	for _, c := range []struct {
		op, err string // err "" = valid
	}{
		{`%r = view.load %fv[%c0] {cache_scope = device, cache_temporal = non_temporal} : view<16xf32> -> f32`, ""},
		{`%r = view.load %fv[%c0] {cache_scope = system, cache_temporal = bypass} : view<16xf32> -> f32`, ""},
		{`view.store %x, %fv[%c0] {cache_scope = cu, cache_temporal = non_temporal_writeback} : f32, view<16xf32>`, ""},
		{`%r = vector.load %iv[%c0] {cache_scope = se, cache_temporal = last_use} : view<16xi32> -> vector<4xi32>`, ""},
		{`vector.atomic.reduce<addi> %v, %iv[%c0][%o] {cache_scope = device, cache_temporal = non_temporal, ordering = relaxed, scope = workgroup} : vector<4xi32>, view<16xi32>, vector<4xindex>`, ""},
		{`%r = view.load %fv[%c0] {cache_scope = device} : view<16xf32> -> f32`,
			"6:28: view.load: cache_temporal must be present when cache_scope is"},
		{`%r = vector.load %iv[%c0] {cache_temporal = non_temporal} : view<16xi32> -> vector<4xi32>`,
			"6:30: vector.load: cache_scope must be present when cache_temporal is"},
		{`%r = view.load %fv[%c0] {cache_scope = device, cache_temporal = bogus} : view<16xf32> -> f32`,
			"6:50: view.load: cache_temporal = bogus: want one of regular,"},
		{`%r = view.load %fv[%c0] {cache_scope = planet, cache_temporal = regular} : view<16xf32> -> f32`,
			"6:28: view.load: cache_scope = planet: want cu, se, device or system"},
		{`%r = view.load %fv[%c0] {cache_scope = device, cache_temporal = writeback} : view<16xf32> -> f32`,
			"view.load: cache_temporal = writeback: want a load-compatible hint"},
		{`view.store %x, %fv[%c0] {cache_scope = device, cache_temporal = last_use} : f32, view<16xf32>`,
			"view.store: cache_temporal = last_use: want a store-compatible hint"},
		{`%r = view.load %fv[%c0] {cache_scope = device, cache_temporal = bypass} : view<16xf32> -> f32`,
			"view.load: cache_temporal = bypass needs cache_scope = system"},
		{`%r = view.load %fv[%c0] {cache_scope = system, cache_temporal = last_use} : view<16xf32> -> f32`,
			"view.load: cache_temporal = last_use needs a scope below system"},
		{`vector.atomic.reduce<addi> %v, %iv[%c0][%o] {cache_scope = device, cache_temporal = high_temporal, ordering = relaxed, scope = workgroup} : vector<4xi32>, view<16xi32>, vector<4xindex>`,
			"vector.atomic.reduce: cache_temporal = high_temporal: want regular or non_temporal"},
	} {
		src := strings.Replace(tmpl, "OP", c.op, 1)
		var err error
		m, perr := ParseFile("c.loom", []byte(src))
		if err = perr; err == nil {
			_, err = NewProgram(m)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.op, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.op, err, c.err)
		case c.err != "" && !errors.Is(err, ErrInvalid):
			t.Errorf("%s: error %v is not ErrInvalid", c.op, err)
		}
	}
}
