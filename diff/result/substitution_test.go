package result

import (
	"testing"

	"github.com/profdiff/profdiff/diff/rules"
)

func TestFindSubstitution(t *testing.T) {
	bucket := func(b Bucket, base, new float64) BucketRow {
		return BucketRow{Bucket: b, Base: base, New: new, Delta: new - base}
	}
	method := func(name string, b Bucket, base, new float64) MethodRow {
		return MethodRow{Name: name, Bucket: b, Base: base, New: new, Delta: new - base}
	}
	// The .NET story's preview.1: new wait-subsystem waits (12.4%) in
	// place of the semaphore's (12.8%), lock contention 1.21% → 4.86%.
	dotnet := []MethodRow{
		method("LowLevelLock.WaitAndAcquire", rules.LockContention, 0.0121, 0.0486),
		method("WaitSubsystem.Wait", rules.Wait, 0, 0.0875),
		method("LowLevelLifoSemaphore.Wait", rules.Wait, 0.128, 0),
		method("Json.Serialize", rules.CPU, 0.30, 0.20),
	}
	dotnetBuckets := []BucketRow{
		bucket(rules.CPU, 0.60, 0.604), bucket(rules.Wait, 0.388, 0.347), bucket(rules.LockContention, 0.0121, 0.0486),
	}
	s := FindSubstitution(MeaningState, dotnetBuckets, dotnet)
	if s == nil {
		t.Fatal("no substitution in the .NET story's numbers")
	}
	if s.In[0] != "WaitSubsystem.Wait" || s.Out[0] != "LowLevelLifoSemaphore.Wait" || s.Bucket != nil {
		t.Errorf("in %v out %v bucket %v", s.In, s.Out, s.Bucket)
	}
	if len(s.Buckets) != 2 || s.Buckets[0].Bucket != rules.Wait || s.Buckets[1].Bucket != rules.LockContention || s.Buckets[1].Note != "4x" {
		t.Errorf("buckets %+v, want wait then lock-contention 4x", s.Buckets)
	}

	// Within one bucket: both groups are lock contention.
	within := []MethodRow{method("a.Lock", rules.LockContention, 0.10, 0), method("b.Lock", rules.LockContention, 0, 0.09)}
	s = FindSubstitution(MeaningCPU, []BucketRow{bucket(rules.LockContention, 0.10, 0.09)}, within)
	if s == nil || s.Bucket == nil || *s.Bucket != rules.LockContention {
		t.Errorf("within a bucket: %+v", s)
	}

	for name, c := range map[string]struct {
		m       Meaning
		buckets []BucketRow
		methods []MethodRow
	}{
		// The new waits add to the old: total wait grew by their size.
		"added": {MeaningState, []BucketRow{bucket(rules.Wait, 0.10, 0.18)},
			[]MethodRow{method("a", rules.Wait, 0.10, 0.02), method("b", rules.Wait, 0, 0.16)}},
		// One group twice the other's size.
		"unbalanced": {MeaningState, []BucketRow{bucket(rules.Wait, 0.20, 0.20)},
			[]MethodRow{method("a", rules.Wait, 0.10, 0), method("b", rules.Wait, 0, 0.05)}},
		// Half a point each way is below SubstitutionMin.
		"small": {MeaningState, []BucketRow{bucket(rules.Wait, 0.20, 0.20)},
			[]MethodRow{method("a", rules.Wait, 0.005, 0), method("b", rules.Wait, 0, 0.005)}},
		// Heap profiles have no waits.
		"heap": {MeaningMemory, []BucketRow{bucket(rules.Wait, 0.20, 0.20)},
			[]MethodRow{method("a", rules.Wait, 0.10, 0), method("b", rules.Wait, 0, 0.10)}},
	} {
		if s := FindSubstitution(c.m, c.buckets, c.methods); s != nil {
			t.Errorf("%s: substitution %+v, want none", name, s)
		}
	}
}
