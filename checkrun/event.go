package checkrun

import (
	"fmt"
	"strings"

	"github.com/loomgen/loomgen/loom/interp"
)

// eventDict is the structured form check.expect.event<device> matches: the
// report's type and severity at the top, its details under "tsan" or
// "asan" (field names as Loom's device reports spell them), plus the
// coordinates and byte offset loomgen's sanitizer adds.
func eventDict(ev *interp.Event) map[string]any {
	coords := func(c [3]int) []any { return []any{int64(c[0]), int64(c[1]), int64(c[2])} }
	d := map[string]any{
		"check":         ev.Check,
		"memory":        ev.Memory,
		"access_length": int64(ev.Length),
		"offset":        ev.Offset,
		"workgroup":     coords(ev.Workgroup),
		"workitem":      coords(ev.Workitem),
	}
	out := map[string]any{"type": ev.Type, "severity": "error"}
	if ev.Type == "tsan_report" {
		d["current_access"] = ev.Access
		d["prior_access"] = ev.PriorAccess
		d["prior_workgroup"] = coords(ev.PriorWorkgroup)
		d["prior_workitem"] = coords(ev.PriorWorkitem)
		out["tsan"] = d
	} else {
		d["access"] = ev.Access
		out["asan"] = d
	}
	return out
}

// matchEvents checks every check.expect.event<device> {…, count = N}: the
// events matching its pattern (every key it names equal in the report;
// dictionaries match by subset) number N, or at least one without count.
// A report no expectation matches fails the case.
func (e *eval) matchEvents() error {
	used := make([]bool, len(e.events))
	for _, op := range e.expects {
		if p := strings.TrimSpace(op.Param); p != "device" {
			return skipf("%s: check.expect.event<%s>: only <device> events are reported by loomgen's sanitizer", op.Pos, p)
		}
		pat, err := attrs(op)
		if err != nil {
			return errorf("%v", err)
		}
		count := int64(-1)
		if c, ok := pat["count"]; ok {
			n, ok := c.(int64)
			if !ok || n < 0 {
				return errorf("%s: check.expect.event: count must be a non-negative integer", op.Pos)
			}
			count = n
			delete(pat, "count")
		}
		got := 0
		var why string
		for i, ev := range e.events {
			d := eventDict(ev)
			if msg := subset(pat, d, ""); msg != "" {
				if why == "" {
					why = msg
				}
				continue
			}
			got++
			used[i] = true
		}
		if (count >= 0 && int64(got) != count) || (count < 0 && got == 0) {
			want := fmt.Sprint(count)
			if count < 0 {
				want = "at least 1"
			}
			msg := fmt.Sprintf("%s: check.expect.event<device> %s: %d matching events, want %s", op.Pos, formatDict(pat), got, want)
			if len(e.events) == 0 {
				msg += " (the sanitizer reported nothing)"
			} else {
				msg += fmt.Sprintf(" (reported: %s", e.events[0])
				if why != "" {
					msg += "; mismatch: " + why
				}
				msg += ")"
			}
			e.failures = append(e.failures, msg)
		}
	}
	for i, ev := range e.events {
		if !used[i] {
			e.failures = append(e.failures, "unexpected sanitizer report: "+ev.String())
		}
	}
	return nil
}

// subset reports why pattern is not contained in got ("" when it is).
func subset(pattern, got map[string]any, path string) string {
	for _, k := range sortedKeys(pattern) {
		pv := pattern[k]
		gv, ok := got[k]
		if !ok {
			return fmt.Sprintf("field %s%s is not reported by loomgen's sanitizer", path, k)
		}
		if pm, ok := pv.(map[string]any); ok {
			gm, ok := gv.(map[string]any)
			if !ok {
				return fmt.Sprintf("%s%s is not a dictionary", path, k)
			}
			if msg := subset(pm, gm, path+k+"."); msg != "" {
				return msg
			}
			continue
		}
		if formatValue(pv) != formatValue(gv) {
			return fmt.Sprintf("%s%s = %s, pattern wants %s", path, k, formatValue(gv), formatValue(pv))
		}
	}
	return ""
}
