package loom

import "testing"

// TestFragmentLayouts checks that every layout covers its tile, that Owner
// inverts Coord, and the documented lane formulas of the subgroup layout.
func TestFragmentLayouts(t *testing.T) {
	cases := []struct {
		role              FragmentRole
		rows, cols, pay   int64
		subgroup          bool
		lane, e, row, col int // one documented coordinate
	}{
		{FragmentLHS, 16, 16, 16, true, 21, 3, 5, 3},
		{FragmentLHS, 16, 32, 32, true, 31, 30, 15, 30},
		{FragmentRHS, 16, 16, 16, true, 18, 7, 7, 2},
		{FragmentInit, 16, 16, 8, true, 17, 3, 7, 1},
		{FragmentResult, 16, 16, 8, true, 4, 0, 0, 4},
		{FragmentLHS, 2, 4, 8, false, 9, 6, 1, 2},
		{FragmentInit, 2, 2, 4, false, 0, 3, 1, 1},
	}
	for _, c := range cases {
		f, err := NewFragmentLayout(c.role, c.rows, c.cols, c.pay)
		if err != nil {
			t.Fatalf("%s %dx%d/%d: %v", c.role, c.rows, c.cols, c.pay, err)
		}
		if f.Subgroup != c.subgroup {
			t.Errorf("%s %dx%d/%d: subgroup %v", c.role, c.rows, c.cols, c.pay, f.Subgroup)
		}
		if r, cl := f.Coord(c.lane, c.e); r != c.row || cl != c.col {
			t.Errorf("%s: lane %d component %d holds (%d, %d), want (%d, %d)", c.role, c.lane, c.e, r, cl, c.row, c.col)
		}
		lanes := 1
		if f.Subgroup {
			lanes = FragmentSubgroupSize
		}
		seen := map[[2]int]bool{}
		for l := range lanes {
			for e := range f.Payload {
				r, cl := f.Coord(l, e)
				if r < 0 || r >= f.Rows || cl < 0 || cl >= f.Cols {
					t.Fatalf("%s: lane %d component %d outside the tile: (%d, %d)", c.role, l, e, r, cl)
				}
				seen[[2]int{r, cl}] = true
				ol, oe := f.Owner(r, cl)
				if r2, c2 := f.Coord(ol, oe); r2 != r || c2 != cl {
					t.Fatalf("%s: Owner(%d, %d) = lane %d component %d, which holds (%d, %d)", c.role, r, cl, ol, oe, r2, c2)
				}
			}
		}
		if len(seen) != f.Rows*f.Cols {
			t.Errorf("%s: %d of %d elements covered", c.role, len(seen), f.Rows*f.Cols)
		}
	}
	for _, bad := range []struct {
		role            FragmentRole
		rows, cols, pay int64
	}{
		{FragmentLHS, 8, 16, 16}, {FragmentInit, 16, 16, 16}, {FragmentRHS, 16, 8, 7}, {FragmentLHS, 0, 4, 4},
	} {
		if _, err := NewFragmentLayout(bad.role, bad.rows, bad.cols, bad.pay); err == nil {
			t.Errorf("%s [%d, %d] in %d: no error", bad.role, bad.rows, bad.cols, bad.pay)
		}
	}
}

func TestMMAShape(t *testing.T) {
	cases := []struct {
		lhs, rhs, acc int
		m, n, k       int
		subgroup, ok  bool
	}{
		{16, 16, 8, 16, 16, 16, true, true},
		{32, 32, 8, 16, 16, 32, true, true},
		{8, 8, 4, 2, 2, 4, false, true},
		{6, 12, 8, 2, 4, 3, false, true},
		{5, 7, 3, 0, 0, 0, false, false},
	}
	for _, c := range cases {
		m, n, k, sub, err := MMAShape(c.lhs, c.rhs, c.acc)
		if (err == nil) != c.ok || m != c.m || n != c.n || k != c.k || sub != c.subgroup {
			t.Errorf("MMAShape(%d, %d, %d) = %d, %d, %d, %v, %v", c.lhs, c.rhs, c.acc, m, n, k, sub, err)
		}
	}
}
