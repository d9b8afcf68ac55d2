package diff

import (
	"errors"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
)

// TestWaitNoInputHasSampleType: a selected sample type that no profile has
// is Wait's error (ErrNoSampleType), listing every profile's types, once
// all are added; Add itself accepts them while none has it.
func TestWaitNoInputHasSampleType(t *testing.T) {
	a := NewAnalyzer(Options{SampleIndex: "cpu"})
	for i, text := range []string{"main;f 3\nmain;g 1\n", "main;f 1\nmain;g 3\n"} {
		l, err := profile.Parse([]string{"a.folded", "b.folded"}[i], []byte(text), 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Add(result.Side(i), l); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	err := a.Wait()
	var absent *AbsentSampleTypeError
	if !errors.Is(err, ErrNoSampleType) || !errors.As(err, &absent) || len(absent.Inputs) != 2 {
		t.Fatalf("Wait: %v; want an AbsentSampleTypeError of both inputs", err)
	}
	if want := `no input has sample type "cpu": a.folded, b.folded have samples/count`; err.Error() != want {
		t.Errorf("Wait: %q, want %q", err, want)
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("a library error names a flag: %v", err)
	}
}
