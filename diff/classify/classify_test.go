package classify

import (
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
)

// IdleSystem knows the two reasons the Go runtime gives its parked
// collector goroutines, as a trace records them (profile/gotrace keeps the
// runtime's words), and no other: a goroutine waiting on a lock or a
// channel inside the collector is not idle.
func TestIdleSystem(t *testing.T) {
	reasons := map[string]bool{
		"system goroutine wait":        true,
		"GC background sweeper wait":   true,
		"sync":                         false,
		"chan receive":                 false,
		"GC mark assist wait for work": false,
	}
	p := &pprofile.Profile{SampleType: []*pprofile.ValueType{{Type: "wall", Unit: "nanoseconds"}}}
	var order []string
	for r := range reasons {
		p.Sample = append(p.Sample, &pprofile.Sample{Value: []int64{1}, Label: map[string][]string{profile.LabelReason: {r}}})
		order = append(order, r)
	}
	p.Sample = append(p.Sample, &pprofile.Sample{Value: []int64{1}})
	recs := pull.FromProfile(p)
	for _, r := range order {
		rec, err := recs.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got := IdleSystem(rec); got != reasons[r] {
			t.Errorf("IdleSystem with reason %q = %v, want %v", r, got, reasons[r])
		}
	}
	if rec, err := recs.Next(); err != nil || IdleSystem(rec) {
		t.Errorf("a sample without a reason: idle %v, %v", rec != nil && IdleSystem(rec), err)
	}
}
