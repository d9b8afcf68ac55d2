package hugeheap

import "testing"

func TestMode(t *testing.T) {
	for in, want := range map[string]string{
		"always [madvise] never\n": "madvise",
		"[always] madvise never\n": "always",
		"always madvise [never]\n": "never",
		"always madvise never\n":   "",
		"[madvise":                 "",
		"":                         "",
	} {
		if got := mode(in); got != want {
			t.Errorf("mode(%q) = %q, want %q", in, got, want)
		}
	}
}

// A job too small to gain, or one the environment turns it off for, is
// not reserved for.
func TestReserveSkips(t *testing.T) {
	if got := Reserve(MinSize - 1); got != 0 {
		t.Errorf("Reserve(MinSize-1) advised %d bytes, want 0", got)
	}
	for _, v := range []string{"off", "0"} {
		t.Setenv(EnvOff, v)
		if got := Reserve(64 << 20); got != 0 {
			t.Errorf("%s=%s: Reserve advised %d bytes, want 0", EnvOff, v, got)
		}
	}
}
