package units

import "testing"

// Amounts read in the largest unit they reach once rounded to three
// significant digits.
func TestFormat(t *testing.T) {
	cases := []struct {
		v    float64
		unit string
		want string
	}{
		{4.79e9, "nanoseconds", "4.79 s"},
		{23e6, "nanoseconds", "23 ms"},
		{999.96e6, "nanoseconds", "1 s"},
		{1500, "nanoseconds", "1.5 µs"},
		{0, "nanoseconds", "0 s"},
		{0.012, "s/s", "12 ms/s"},
		{1.2, "s/s", "1.2 s/s"},
		{3 << 20, "bytes", "3 MiB"},
		{1023.9, "bytes", "1 KiB"},
		{512, "bytes", "512 B"},
		{0.53, "cores", "0.53 cores"},
		{0.0032, "cores", "0.0032 cores"},
		{1234.6, "threads", "1235 threads"},
		{1551, "count", "1551"},
		{2.5, "seconds", "2.5 s"},
		{1500, "ms", "1.5 s"},
	}
	for _, c := range cases {
		if got := Format(c.v, c.unit); got != c.want {
			t.Errorf("Format(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
	if got := Signed(-0.35e9, "nanoseconds"); got != "-350 ms" {
		t.Errorf("signed = %q", got)
	}
	if got := Signed(0, "s/s"); got != "0 s/s" {
		t.Errorf("signed zero = %q", got)
	}
}

// Time units are the ones with seconds, exactly the literals the rates
// were made with; delay per second and bytes are not time.
func TestSeconds(t *testing.T) {
	for unit, want := range map[string]float64{
		"nanoseconds": 1e-9, "ns": 1e-9, "microseconds": 1e-6, "us": 1e-6, "milliseconds": 1e-3, "ms": 1e-3, "seconds": 1, "s": 1,
		"s/s": 0, "bytes": 0, "count": 0, "cores": 0, "": 0,
	} {
		if got := Seconds(unit); got != want {
			t.Errorf("Seconds(%q) = %v, want %v", unit, got, want)
		}
	}
}

// Lookup hands out a copy: changing it leaves the table as it was.
func TestLookupCopies(t *testing.T) {
	l, ok := Lookup("bytes")
	if !ok || len(l.Steps) != 5 || l.Steps[2].Name != "MiB" {
		t.Fatalf("Lookup(bytes) = %+v, %v", l, ok)
	}
	l.Steps[2].Name = "changed"
	if Format(3<<20, "bytes") != "3 MiB" {
		t.Error("a caller's copy changed the table")
	}
	if _, ok := Lookup("cores"); ok || Scaled("cores") || !Scaled("s/s") {
		t.Error("cores has no ladder; s/s has one")
	}
}
