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
		wave              int
	}{
		{FragmentLHS, 16, 16, 16, true, 21, 3, 5, 3, 32},
		{FragmentLHS, 16, 32, 32, true, 31, 30, 15, 30, 32},
		{FragmentRHS, 16, 16, 16, true, 18, 7, 7, 2, 32},
		{FragmentInit, 16, 16, 8, true, 17, 3, 7, 1, 32},
		{FragmentResult, 16, 16, 8, true, 4, 0, 0, 4, 32},
		// Wave 64 (CDNA MFMA): lane 37 is row 5 of lane group 2.
		{FragmentLHS, 16, 16, 4, true, 37, 1, 5, 9, 64},
		{FragmentRHS, 16, 16, 4, true, 37, 3, 11, 5, 64},
		{FragmentLHS, 16, 4, 1, true, 53, 0, 5, 3, 64},
		{FragmentInit, 16, 16, 4, true, 37, 2, 10, 5, 64},
		{FragmentResult, 16, 16, 4, true, 63, 3, 15, 15, 64},
		{FragmentLHS, 2, 4, 8, false, 9, 6, 1, 2, 32},
		{FragmentInit, 2, 2, 4, false, 0, 3, 1, 1, 32},
	}
	for _, c := range cases {
		f, err := NewFragmentLayout(c.role, c.rows, c.cols, c.pay, c.wave)
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
			lanes = c.wave
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
		wave            int
	}{
		{FragmentLHS, 8, 16, 16, 32}, {FragmentInit, 16, 16, 16, 32}, {FragmentRHS, 16, 8, 7, 32}, {FragmentLHS, 0, 4, 4, 32},
		{FragmentLHS, 16, 16, 8, 32}, {FragmentInit, 16, 16, 4, 32}, {FragmentLHS, 16, 16, 16, 64}, {FragmentInit, 16, 16, 8, 64},
	} {
		if _, err := NewFragmentLayout(bad.role, bad.rows, bad.cols, bad.pay, bad.wave); err == nil {
			t.Errorf("%s [%d, %d] in %d: no error", bad.role, bad.rows, bad.cols, bad.pay)
		}
	}
}

func TestMMAShape(t *testing.T) {
	cases := []struct {
		lhs, rhs, acc, wave int
		m, n, k             int
		subgroup, ok        bool
	}{
		{16, 16, 8, 32, 16, 16, 16, true, true},
		{32, 32, 8, 32, 16, 16, 32, true, true},
		{8, 8, 4, 32, 2, 2, 4, false, true},
		{6, 12, 8, 32, 2, 4, 3, false, true},
		{5, 7, 3, 32, 0, 0, 0, false, false},
		{4, 4, 4, 64, 16, 16, 16, true, true},
		{1, 1, 4, 64, 16, 16, 4, true, true},
		{4, 4, 4, 32, 2, 2, 2, false, true},
	}
	for _, c := range cases {
		m, n, k, sub, err := MMAShape(c.lhs, c.rhs, c.acc, c.wave)
		if (err == nil) != c.ok || m != c.m || n != c.n || k != c.k || sub != c.subgroup {
			t.Errorf("MMAShape(%d, %d, %d) = %d, %d, %d, %v, %v", c.lhs, c.rhs, c.acc, m, n, k, sub, err)
		}
	}
}
