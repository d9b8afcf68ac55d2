package diff

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/fleet/fleettest"
)

// A side whose duration the loader dropped (here the profile's own time
// stamp, as a Pyroscope query without a start writes it) has no duration
// and no rates in the result, whichever path read it: the model or the
// streaming decoder. The other side keeps its own.
func TestImplausibleDurationHasNoRates(t *testing.T) {
	cpu, err := fleettest.CPUProfile(200*time.Millisecond, false)
	if err != nil || len(cpu.Sample) == 0 {
		t.Skip("cannot record a CPU profile with samples: ", err)
	}
	dir := t.TempDir()
	write := func(name string, stamp bool) string {
		p := cpu.Copy()
		if stamp {
			p.DurationNanos = p.TimeNanos
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good, bad := write("good.pb.gz", false), write("bad.pb.gz", true)
	base, err := profile.Load(context.Background(), good, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, streamed := range []bool{false, true} {
		a := NewAnalyzer(Options{})
		if err := a.Add(result.Base, base); err != nil {
			t.Fatal(err)
		}
		var warns []string
		if streamed {
			r, _, err := profile.LoadRaw(context.Background(), bad, profile.Options{})
			if err != nil || r == nil {
				t.Fatalf("LoadRaw: %v", err)
			}
			in, err := Prepare(r)
			if err != nil || !in.Streamed() {
				t.Fatalf("Prepare: %v (streamed %v)", err, err == nil && in.Streamed())
			}
			warns = in.Loaded().Warnings
			if err := a.AddInput(result.New, in); err != nil {
				t.Fatal(err)
			}
		} else {
			l, err := profile.Load(context.Background(), bad, profile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			warns = l.Warnings
			if err := a.Add(result.New, l); err != nil {
				t.Fatal(err)
			}
		}
		r := a.Diff()
		if n := strings.Count(strings.Join(warns, "\n"), "not a duration"); n != 1 {
			t.Errorf("streamed %v: %d warnings on the duration, want 1: %q", streamed, n, warns)
		}
		if r.New.DurationNanos != 0 || r.New.TotalRate != nil || r.Base.DurationNanos == 0 || r.Base.TotalRate == nil {
			t.Errorf("streamed %v: new duration %d, rate %v; base duration %d, rate %v", streamed, r.New.DurationNanos, r.New.TotalRate, r.Base.DurationNanos, r.Base.TotalRate)
		}
		for _, b := range r.Buckets {
			if b.NewRate != nil {
				t.Errorf("streamed %v: bucket %s has a new rate %v", streamed, b.Bucket, *b.NewRate)
			}
		}
		if r.Normalize != result.NormalizeShare {
			t.Errorf("streamed %v: measure %s, want share", streamed, r.Normalize)
		}
	}
}
