package profile

import "testing"

func TestDropGoTypeArgs(t *testing.T) {
	for in, want := range map[string]string{
		"slices.partitionOrdered[go.shape.int]":         "slices.partitionOrdered",
		"slices.Sort[go.shape.[]int,go.shape.int]":      "slices.Sort",
		"main.(*Set[go.shape.string]).Add":              "main.(*Set).Add",
		"main.Map[...]":                                 "main.Map",
		"std::vector<int>::operator[](unsigned long)":   "std::vector<int>::operator[](unsigned long)",
		"<[T] as core::slice::SliceOrd>::compare":       "<[T] as core::slice::SliceOrd>::compare",
		"main.table[go.shape.int].get[go.shape.string]": "main.table.get",
		"broken[go.shape.int":                           "broken[go.shape.int",
	} {
		if got := dropTypeArgs(in); got != want {
			t.Errorf("dropTypeArgs(%q) = %q, want %q", in, got, want)
		}
	}
}
