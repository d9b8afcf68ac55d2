package otlp

import (
	"errors"
	"strings"
	"testing"
)

// TestDeepJSON checks that JSON nested deeper than the reader takes is
// refused before pdata's decoder recurses into it: a resource attribute of
// 100,000 nested kvlistValues (1.7 MB; a few million levels would exhaust
// the stack), while 50 nested values read.
func TestDeepJSON(t *testing.T) {
	nested := func(depth int) []byte {
		open := strings.Repeat(`{"kvlistValue":{"values":[{"key":"k\"[","value":`, depth)
		closing := strings.Repeat(`}]}}`, depth)
		return []byte(`{"resourceProfiles":[{"resource":{"attributes":[{"key":"deep","value":` + open + `{}` + closing + `}]}}]}`)
	}
	deep := nested(100_000)
	if !Looks(deep) {
		t.Fatal("not taken for OTLP JSON")
	}
	// Level 513 is the "[" of the 127th value (6 levels before the first,
	// 4 in each; the "[" inside the key is text): byte 70 + 126×48 + 25.
	if _, _, err := Parse(deep); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "nested deeper than 512 levels at byte 6143") {
		t.Errorf("error %v, want ErrShape saying where it nests too deep", err)
	}
	if _, _, err := Parse(nested(50)); err != nil {
		t.Errorf("50 nested values: %v", err)
	}
}
