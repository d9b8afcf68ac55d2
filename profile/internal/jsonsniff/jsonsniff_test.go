package jsonsniff

import "testing"

func TestObject(t *testing.T) {
	for _, c := range []struct {
		in   string
		rest string
		ok   bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{" \t\r\n{}", "{}", true},
		{"\xEF\xBB\xBF{}", "\xEF\xBB\xBF{}", false}, // the caller drops a byte-order mark
		{"[{}]", "[{}]", false},
		{"", "", false},
		{" \n", "", false},
		{"\v{}", "\v{}", false}, // vertical tab is no JSON white space
	} {
		rest, ok := Object([]byte(c.in))
		if string(rest) != c.rest || ok != c.ok {
			t.Errorf("Object(%q) = %q, %v; want %q, %v", c.in, rest, ok, c.rest, c.ok)
		}
	}
}

func TestObjectWith(t *testing.T) {
	keys := []string{`"meta"`, `"threads"`}
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"meta":{},"threads":[]}`, true},
		{` {"threads":[],"meta":{}`, true}, // cut short: still the format's
		{`{"meta":{}}`, false},
		{`[{"meta":{},"threads":[]}]`, false},
		{`{"meta":{},"thread":[]}`, false},
	} {
		if got := ObjectWith([]byte(c.in), keys...); got != c.ok {
			t.Errorf("ObjectWith(%q) = %v, want %v", c.in, got, c.ok)
		}
	}
	if !ObjectWith([]byte("{}")) {
		t.Error("ObjectWith of no keys refused an object")
	}
}
