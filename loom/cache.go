package loom

import (
	"fmt"
	"slices"
	"strings"
)

// CachePolicy is a memory op's cache hint: {cache_scope = S,
// cache_temporal = T}. Loom pairs the two attributes (one without the
// other is malformed) and gives them no effect on results: a backend maps
// them to what its caches offer or ignores them.
type CachePolicy struct {
	// Scope is cu, se, device or system.
	Scope string
	// Temporal is one of CacheTemporals.
	Temporal string
}

// CacheTemporals are Loom's temporal cache hints. The compound ones name
// the near (per-compute-unit) cache first and the outer one second:
// non_temporal_regular is non-temporal near and regular outer.
var CacheTemporals = []string{
	"regular", "non_temporal", "high_temporal", "last_use", "writeback",
	"non_temporal_regular", "regular_non_temporal", "non_temporal_high_temporal",
	"non_temporal_writeback", "bypass",
}

// CacheScopes are Loom's cache scopes, innermost first.
var CacheScopes = []string{"cu", "se", "device", "system"}

// CacheAccess says how a memory op uses its cache policy, which decides the
// temporal hints it may carry.
type CacheAccess int

// The kinds of memory access a cache policy can be attached to.
const (
	CacheLoad   CacheAccess = iota // writeback hints are store-only
	CacheStore                     // last_use is load-only
	CacheAtomic                    // regular or non_temporal only
)

// CacheAccessOf classifies op for its cache policy: false when op does not
// carry a paired one in Loom (the attributes are then not checked;
// fragment loads and stores take cache_scope alone). Asynchronous
// transfers load when their direction is global_to_workgroup and store
// when it is workgroup_to_global.
func CacheAccessOf(op *Op) (CacheAccess, bool) {
	name := op.Name
	switch {
	case strings.HasPrefix(name, "view.atomic.") || strings.HasPrefix(name, "vector.atomic."):
		return CacheAtomic, true
	case name == "view.load", strings.HasPrefix(name, "vector.load"), strings.HasPrefix(name, "vector.gather"):
		return CacheLoad, true
	case name == "view.store", strings.HasPrefix(name, "vector.store"), strings.HasPrefix(name, "vector.scatter"):
		return CacheStore, true
	case strings.HasPrefix(name, "kernel.async."):
		if op.Attr("cache_scope") == nil && op.Attr("cache_temporal") == nil {
			return 0, false
		}
		if attrText(op.Attr("direction")) == "workgroup_to_global" || strings.Contains(name, ".store") {
			return CacheStore, true
		}
		return CacheLoad, true
	}
	return 0, false
}

// CachePolicyOf reads and validates op's cache policy by Loom's rules: the
// two attributes together or neither, known values, last_use not at
// system scope, bypass only at system scope, and a temporal hint the
// access allows. ok is false when op has no policy; an error is an *Error
// of class ErrInvalid at the offending attribute.
func CachePolicyOf(op *Op, access CacheAccess) (p CachePolicy, ok bool, err error) {
	sa, ta := op.Attr("cache_scope"), op.Attr("cache_temporal")
	switch {
	case sa == nil && ta == nil:
		return CachePolicy{}, false, nil
	case sa == nil:
		return CachePolicy{}, false, cacheErr(ta.Pos, "%s: cache_scope must be present when cache_temporal is", op.Name)
	case ta == nil:
		return CachePolicy{}, false, cacheErr(sa.Pos, "%s: cache_temporal must be present when cache_scope is", op.Name)
	}
	p = CachePolicy{Scope: attrText(sa), Temporal: attrText(ta)}
	if !slices.Contains(CacheScopes, p.Scope) {
		return p, false, cacheErr(sa.Pos, "%s: cache_scope = %s: want cu, se, device or system", op.Name, p.Scope)
	}
	if !slices.Contains(CacheTemporals, p.Temporal) {
		return p, false, cacheErr(ta.Pos, "%s: cache_temporal = %s: want one of %s", op.Name, p.Temporal, strings.Join(CacheTemporals, ", "))
	}
	switch {
	case p.Temporal == "last_use" && p.Scope == "system":
		return p, false, cacheErr(sa.Pos, "%s: cache_temporal = last_use needs a scope below system", op.Name)
	case p.Temporal == "bypass" && p.Scope != "system":
		return p, false, cacheErr(sa.Pos, "%s: cache_temporal = bypass needs cache_scope = system", op.Name)
	}
	var bad bool
	var want string
	switch access {
	case CacheLoad:
		bad, want = p.Temporal == "writeback" || p.Temporal == "non_temporal_writeback", "a load-compatible hint (not writeback or non_temporal_writeback)"
	case CacheStore:
		bad, want = p.Temporal == "last_use", "a store-compatible hint (not last_use)"
	case CacheAtomic:
		bad, want = p.Temporal != "regular" && p.Temporal != "non_temporal", "regular or non_temporal"
	}
	if bad {
		return p, false, cacheErr(ta.Pos, "%s: cache_temporal = %s: want %s", op.Name, p.Temporal, want)
	}
	return p, true, nil
}

// cacheErr is a checker diagnostic about a cache policy.
func cacheErr(pos Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Class: ErrInvalid}
}

// attrText is an enum attribute's word (or string), "" when absent.
func attrText(a *Attr) string {
	if a == nil {
		return ""
	}
	if a.Value.Str != "" {
		return a.Value.Str
	}
	return a.Value.Text
}
