package nettrace_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/internal/readertest"
	"github.com/profdiff/profdiff/profile/nettrace"
)

// FuzzProfile: whatever Parse reads is a valid thread-time profile with no
// negative value whose bucket shares, loaded as profdiff loads it, lie in
// [0, 1] and sum to 1; whatever it rejects fails with a message (one line
// once profile.Parse has named the source). Seeds: the synthetic traces in
// both header encodings and pointer sizes.
func FuzzProfile(f *testing.F) {
	for _, compressed := range []bool{true, false} {
		for _, ptr := range []int{4, 8} {
			f.Add(nettrace.Synthetic(compressed, ptr))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p *pprofile.Profile
		var err error
		readertest.BoundedAlloc(t, "Parse", len(data), func() { p, _, err = nettrace.Parse(data) })
		if err != nil {
			if p != nil || strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("profile %v with error %q", p != nil, err)
			}
			readertest.NotRecovered(t, "Parse", err)
		} else {
			if err := p.CheckValid(); err != nil {
				t.Fatalf("invalid profile: %v", err)
			}
			for _, s := range p.Sample {
				for _, v := range s.Value {
					if v < 0 {
						t.Fatalf("negative value %d", v)
					}
				}
			}
		}
		checkLoaded(t, data)
	})
}

// checkLoaded loads data as profdiff does and checks the error's form or
// the analyzer's bucket shares.
func checkLoaded(t *testing.T, data []byte) {
	l, err := profile.Parse("fuzz.nettrace", data, 4<<20)
	if err != nil {
		var pe *profile.Error
		if !errors.As(err, &pe) || strings.ContainsAny(err.Error(), "\r\n") || !strings.HasPrefix(err.Error(), "fuzz.nettrace: ") {
			t.Fatalf("error %q (%T) is not one line naming the source", err, err)
		}
		return
	}
	a := diff.NewAnalyzer(diff.Options{Top: -1})
	if err := a.Add(result.Base, l); err != nil {
		return
	}
	r := a.Top()
	var sum float64
	for _, b := range r.Buckets {
		if !(b.Share >= 0 && b.Share <= 1+1e-9) {
			t.Errorf("bucket %s share %v", b.Bucket, b.Share)
		}
		sum += b.Share
	}
	if r.Total > 0 && math.Abs(sum-1) > 1e-9 || r.Total == 0 && sum != 0 || !(r.Total >= 0) {
		t.Errorf("bucket shares sum to %v of a total %v", sum, r.Total)
	}
}
