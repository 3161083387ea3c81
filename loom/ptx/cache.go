package ptx

import (
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Loom's cache policies ({cache_scope, cache_temporal}) on global loads and
// stores become PTX cache qualifiers; they never change results. NVIDIA
// GPUs have a per-SM L1 and a device-wide L2, the point of coherence, so
// "near" in Loom's compound hints is L1 and "outer" is L2, and no scope
// below system can bypass L2. The scope otherwise selects nothing: weak
// loads and stores are ordered by fences and barriers, not by their cache
// operator.

// loadHint is the qualifier a global load with policy p takes.
func loadHint(p loom.CachePolicy) string {
	switch p.Temporal {
	case "non_temporal":
		// Read once: do not allocate the lines in L1, so they do not
		// evict what the SM reuses.
		return ".L1::no_allocate"
	case "non_temporal_regular", "non_temporal_high_temporal":
		return ".L1::no_allocate"
	case "high_temporal":
		return ".L1::evict_last"
	case "last_use":
		return ".lu"
	case "bypass":
		// System scope (the checker allows no other): do not trust a
		// cached copy, fetch again.
		return ".cv"
	}
	return "" // regular, regular_non_temporal (L2's priority stays)
}

// storeHint is the qualifier a global store with policy p takes. L1 does
// not hold stored global data, so only the outer half of a hint matters.
func storeHint(p loom.CachePolicy) string {
	switch p.Temporal {
	case "non_temporal", "regular_non_temporal":
		return ".cs" // streaming: evict first
	case "bypass":
		return ".wt" // write through to system memory
	}
	return ""
}

// cached returns the view v as op accesses it: with the PTX cache
// qualifier of op's cache policy appended to the state space when v is in
// global memory and the access is not volatile (volatile takes no cache
// operator), and .nc on a load of a view marked nc (a noalias root of a
// read-only parameter), else v itself. The checker has validated the
// policy.
func cached(op *loom.Op, v *val, acc loom.CacheAccess, volatile bool) *val {
	if v.space != "global" || volatile {
		return v
	}
	h := ""
	if p, ok, err := loom.CachePolicyOf(op, acc); ok && err == nil {
		h = loadHint(p)
		if acc == loom.CacheStore {
			h = storeHint(p)
		}
	}
	if acc == loom.CacheLoad && v.nc && (h == "" || strings.HasPrefix(h, ".L1::")) {
		// ld.global.nc takes eviction priorities, not cache operators.
		h = ".nc" + h
	}
	if h == "" {
		return v
	}
	c := *v
	c.space += h
	return &c
}
