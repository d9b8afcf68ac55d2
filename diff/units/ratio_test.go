package units

import "testing"

func TestRatioNote(t *testing.T) {
	cases := []struct {
		base, new float64
		want      string
	}{
		{0, 0, ""},
		{0, 0.0456, "new"},
		{0.1280, 0, "gone"},
		{0.0027, 0.0486, "18x"},
		{0.0552, 0.1091, "doubled"},
		{0.10, 0.1751, "doubled"},
		{0.10, 0.174, ""},
		{0.10, 0.249, "doubled"},
		{0.10, 0.25, "3x"},
		{0.10, 0.05, "halved"},
		{0.10, 0.04, "1/3"},
		{0.0620, 0.0250, "halved"},
		{0.10, 0.11, ""},
		{0.10, 0.09, ""},
		{1, 1000, "1000x"},
		{1, 1001, ">1000x"},
		{1000, 1, "1/1000"},
		{691e6, 3.12e3, "<1/1000"},
	}
	for _, c := range cases {
		if got := RatioNote(c.base, c.new); got != c.want {
			t.Errorf("RatioNote(%v, %v) = %q, want %q", c.base, c.new, got, c.want)
		}
	}
}

func TestInMeasure(t *testing.T) {
	for _, c := range []struct{ note, measure, want string }{
		{"18x", "rate", "18x rate"}, {"halved", "share", "halved share"}, {"1/3", "value", "1/3 value"},
		{"new", "rate", "new"}, {"gone", "share", "gone"}, {"", "share", ""},
	} {
		if got := InMeasure(c.note, c.measure); got != c.want {
			t.Errorf("InMeasure(%q, %q) = %q, want %q", c.note, c.measure, got, c.want)
		}
	}
}
