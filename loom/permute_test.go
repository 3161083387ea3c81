package loom

import (
	"slices"
	"testing"
)

func TestTransposeLanes(t *testing.T) {
	cases := []struct {
		name  string
		param string
		src   []int64
		want  []int
		bad   bool
	}{
		{"2x3 swapped", "[1, 0]", []int64{2, 3}, []int{0, 3, 1, 4, 2, 5}, false},
		{"identity", "[0, 1]", []int64{2, 2}, []int{0, 1, 2, 3}, false},
		{"rank 3 rotated", "[2, 0, 1]", []int64{1, 2, 2}, []int{0, 2, 1, 3}, false},
		{"repeated axis", "[0, 0]", []int64{2, 2}, nil, true},
		{"axis out of range", "[0, 2]", []int64{2, 2}, nil, true},
		{"too short", "[0]", []int64{2, 2}, nil, true},
		{"no brackets", "1, 0", []int64{2, 2}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TransposeLanes(&Op{Name: "vector.transpose", Param: c.param}, c.src)
			if c.bad {
				if err == nil {
					t.Fatalf("permutation %s of %v accepted", c.param, c.src)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("lanes %v, want %v", got, c.want)
			}
		})
	}
}
