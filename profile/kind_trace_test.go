package profile

import (
	"bytes"
	"runtime/trace"
	"sync"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/gotrace"
	"github.com/profdiff/profdiff/profile/jfr"
)

// TestKindTraceByComment records a Go execution trace of this test: the
// trace reader's profile carries the comment, which a pprof round trip
// keeps, so it is a trace before and after; the same profile without the
// comment, bucket labels and all, is not.
func TestKindTraceByComment(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("cannot start an execution trace here: %v", err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	mu.Lock()
	for range 4 {
		wg.Go(func() { mu.Lock(); defer mu.Unlock() })
	}
	mu.Unlock()
	wg.Wait()
	trace.Stop()
	p, _, err := gotrace.Parse(buf.Bytes(), gotrace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if k := DetectKind(p); k != KindTrace {
		t.Fatalf("trace reader's profile: kind %s, comments %q", k, p.Comments)
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	back, err := pprofile.Parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	if k := DetectKind(back); k != KindTrace {
		t.Errorf("after a pprof round trip: kind %s, comments %q", k, back.Comments)
	}
	labelled := 0
	for i, s := range back.Sample {
		if len(s.Label[LabelBucket]) > 0 {
			if labelled == 0 { // the first sample is a labelled one
				back.Sample[0], back.Sample[i] = s, back.Sample[0]
			}
			labelled++
		}
	}
	if labelled == 0 {
		t.Fatal("no sample of the trace has a bucket label")
	}
	back.Comments = nil
	if k := DetectKind(back); k == KindTrace {
		t.Errorf("without the comment, %d bucket-labelled samples still read as a trace", labelled)
	}
}

// TestKindJFRThreadTime: kind detection names the JFR reader's thread-time
// sample type by its own constant.
func TestKindJFRThreadTime(t *testing.T) {
	if jfrThreadTime != jfr.ThreadTime {
		t.Errorf("kind.go's jfrThreadTime %q, the JFR reader writes %q", jfrThreadTime, jfr.ThreadTime)
	}
}
