package profile_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	pprofile "github.com/google/pprof/profile"
	querierv1 "github.com/grafana/pyroscope/api/gen/proto/go/querier/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/querier/v1/querierv1connect"
	"google.golang.org/protobuf/proto"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/fleet/fleettest"
	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/pull"
)

// timingWarnings are the warnings CheckTiming gives.
func timingWarnings(l *profile.Loaded) []string {
	var out []string
	for _, w := range l.Warnings {
		if strings.Contains(w, "not a duration") || strings.Contains(w, "the period is left out") {
			out = append(out, w)
		}
	}
	return out
}

// loadBoth loads path by the model (Load) and by the pull reader (LoadRaw,
// pull.Open), which must agree on the duration, period and warnings.
func loadBoth(t *testing.T, path string) *profile.Loaded {
	t.Helper()
	l, err := profile.Load(context.Background(), path, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := profile.LoadRaw(context.Background(), path, profile.Options{})
	if err != nil || r == nil {
		t.Fatalf("LoadRaw: %v (raw %v)", err, r != nil)
	}
	f, err := pull.Open(r, pull.Options{})
	if err != nil {
		t.Fatalf("pull.Open: %v", err)
	}
	s := f.Loaded()
	if s.Profile.DurationNanos != l.Profile.DurationNanos || s.Profile.Period != l.Profile.Period || strings.Join(timingWarnings(s), "\n") != strings.Join(timingWarnings(l), "\n") {
		t.Errorf("pull reader: duration %d, period %d, %q; model: %d, %d, %q", s.Profile.DurationNanos, s.Profile.Period, timingWarnings(s), l.Profile.DurationNanos, l.Profile.Period, timingWarnings(l))
	}
	return l
}

// A Pyroscope querier asked for a merged profile without a start (0)
// answers a duration of end − 0: the query's end, which is the profile's
// time stamp too, about 1.7e18 ns. It is dropped, with one warning naming
// the file and both values.
func TestTimingPyroscopeExport(t *testing.T) {
	cpu, err := fleettest.CPUProfile(200*time.Millisecond, false)
	if err != nil || len(cpu.Sample) == 0 {
		t.Skip("cannot record a CPU profile with samples: ", err)
	}
	py := &fleettest.Pyroscope{Querier: true}
	now := time.Now()
	py.Add(fleettest.Series{Name: "process_cpu", Labels: map[string]string{"service_name": "api"}, Time: now.Add(-time.Minute), Profile: cpu})
	srv := py.Start()
	defer srv.Close()
	client := querierv1connect.NewQuerierServiceClient(http.DefaultClient, srv.URL)
	resp, err := client.SelectMergeProfile(context.Background(), connect.NewRequest(&querierv1.SelectMergeProfileRequest{
		ProfileTypeID: "process_cpu:cpu:nanoseconds:cpu:nanoseconds", LabelSelector: `{service_name="api"}`, End: now.UnixMilli(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	data, err := proto.Marshal(resp.Msg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "export.pb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if resp.Msg.DurationNanos != resp.Msg.TimeNanos || resp.Msg.DurationNanos < 1e18 {
		t.Fatalf("the export's duration %d and time %d: not the querier's answer to a query without a start", resp.Msg.DurationNanos, resp.Msg.TimeNanos)
	}
	l := loadBoth(t, path)
	w := timingWarnings(l)
	t.Logf("%q", w)
	want := []string{path + ": duration ", " s equals the profile's time stamp, " + time.UnixMilli(now.UnixMilli()).UTC().Format(time.RFC3339), "no rates"}
	if len(w) != 1 || !containsAll(w[0], want) {
		t.Errorf("warnings %q, want one holding %q", w, want)
	}
	if l.Profile.DurationNanos != 0 {
		t.Errorf("duration %d kept", l.Profile.DurationNanos)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// A real Go CPU profile, its duration and period then set by the pprof
// library (no real producer writes these wrong on purpose): each rule
// drops what it should, with one warning, and leaves the rest.
func TestTimingGoCPUProfile(t *testing.T) {
	cpu, err := fleettest.CPUProfile(300*time.Millisecond, false)
	if err != nil {
		t.Skip("cannot record a CPU profile: ", err)
	}
	var total int64
	for _, s := range cpu.Sample {
		total += s.Value[1] // cpu/nanoseconds
	}
	if total == 0 {
		t.Skip("the CPU profile recorded no samples")
	}
	day := int64(24 * time.Hour)
	for _, c := range []struct {
		name             string
		edit             func(p *pprofile.Profile)
		warn             string // "" for none
		duration, period bool   // kept
	}{
		{"as recorded", func(*pprofile.Profile) {}, "", true, true},
		{"two days", func(p *pprofile.Profile) { p.DurationNanos = 2 * day }, "duration 172800 s is longer than a day", false, true},
		{"a day", func(p *pprofile.Profile) { p.DurationNanos = day }, "", true, true},
		{"negative", func(p *pprofile.Profile) { p.DurationNanos = -5 }, "duration -5 ns is negative", false, true},
		{"1,025 cores", func(p *pprofile.Profile) { p.DurationNanos = total / 1025 }, "cores busy, more than 1024", false, true},
		{"1,000 cores", func(p *pprofile.Profile) { p.DurationNanos = total / 1000 }, "", true, false}, // the 10ms period outlasts it
		{"negative period", func(p *pprofile.Profile) { p.Period = -1 }, "sampling period -1 (cpu/nanoseconds) is negative", true, false},
		{"period past the duration", func(p *pprofile.Profile) { p.DurationNanos = 2 * p.Period; p.Period *= 3 }, "sampling period 30ms (cpu/nanoseconds) is longer than the duration, 20ms", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := cpu.Copy()
			c.edit(p)
			var buf bytes.Buffer
			if err := p.Write(&buf); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "cpu.pb.gz")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			l := loadBoth(t, path)
			w := timingWarnings(l)
			switch {
			case c.name == "1,000 cores":
				// 1,000 cores is a duration, but the period outlasts it.
				if len(w) != 1 || !strings.Contains(w[0], "is longer than the duration") {
					t.Errorf("warnings %q, want one on the period", w)
				}
			case c.warn == "" && len(w) > 0:
				t.Errorf("warnings %q, want none", w)
			case c.warn != "" && (len(w) != 1 || !strings.HasPrefix(w[0], path+": ") || !strings.Contains(w[0], c.warn)):
				t.Errorf("warnings %q, want one holding %q", w, c.warn)
			}
			if kept := l.Profile.DurationNanos == p.DurationNanos && p.DurationNanos != 0; kept != c.duration {
				t.Errorf("duration %d (stated %d): kept %v, want %v", l.Profile.DurationNanos, p.DurationNanos, kept, c.duration)
			}
			if kept := l.Profile.Period == p.Period; kept != c.period {
				t.Errorf("period %d (stated %d): kept %v, want %v", l.Profile.Period, p.Period, kept, c.period)
			}
		})
	}
}

// Thread time (.NET EventPipe's, a real trace of the corpus) is checked
// against 1,024 threads: a duration that makes the sum of every thread's
// time more threads than that is dropped, one that makes fewer is kept.
func TestTimingThreadTime(t *testing.T) {
	path := filepath.Join(corpus.Need(t), "perfview", "src__TraceEvent__TraceEvent.Tests__inputs__speedscope__only_managed_samples.nettrace.zip")
	l, err := profile.Load(context.Background(), path, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := timingWarnings(l); len(w) > 0 || l.Profile.DurationNanos <= 0 {
		t.Fatalf("as recorded: warnings %q, duration %d", w, l.Profile.DurationNanos)
	}
	var sums []int64
	var wall int64
	for i, st := range l.Profile.SampleType {
		var s int64
		for _, x := range l.Profile.Sample {
			s += x.Value[i]
		}
		sums = append(sums, s)
		if st.Type == "wall" {
			wall = s
		}
	}
	for _, c := range []struct {
		threads float64
		dropped bool
	}{{1000, false}, {1100, true}} {
		l.Warnings, l.Profile.DurationNanos, l.Profile.Period = nil, int64(float64(wall)/c.threads), 0
		profile.CheckTiming(l, sums)
		w := timingWarnings(l)
		if dropped := l.Profile.DurationNanos == 0; dropped != c.dropped || dropped != (len(w) == 1 && strings.Contains(w[0], "threads busy, more than 1024")) {
			t.Errorf("%g threads: duration %d, warnings %q; want dropped %v", c.threads, l.Profile.DurationNanos, w, c.dropped)
		}
	}
}

// A fleet query's duration is the range it states, which may be longer
// than a day: three days asked of a Pyroscope querier (a server from
// before the pprof format of SelectMergeStacktraces, so the merged profile
// comes from SelectMergeProfile, whose answer says three days too) are
// three days, with no warning.
func TestTimingFleetRange(t *testing.T) {
	cpu, err := fleettest.CPUProfile(100*time.Millisecond, false)
	if err != nil || len(cpu.Sample) == 0 {
		t.Skip("cannot record a CPU profile with samples: ", err)
	}
	py := &fleettest.Pyroscope{Querier: true, Legacy: true}
	to := time.Now().Truncate(time.Second)
	from := to.Add(-72 * time.Hour)
	py.Add(fleettest.Series{Name: "process_cpu", Labels: map[string]string{"service_name": "api"}, Time: to.Add(-time.Hour), Profile: cpu})
	srv := py.Start()
	defer srv.Close()
	src := "pyroscope+" + srv.URL + "?type=process_cpu:cpu:nanoseconds:cpu:nanoseconds&query=" + url.QueryEscape(`{service_name="api"}`) +
		"&from=" + from.UTC().Format(time.RFC3339) + "&to=" + to.UTC().Format(time.RFC3339)
	l, err := profile.Load(context.Background(), src, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if calls := py.Calls(); !slices.Contains(calls, "SelectMergeProfile") {
		t.Fatalf("calls %q: the querier's SelectMergeProfile was not asked", calls)
	}
	if w := timingWarnings(l); len(w) > 0 || l.Profile.DurationNanos != int64(72*time.Hour) {
		t.Errorf("duration %v, warnings %q; want 72h and none", time.Duration(l.Profile.DurationNanos), w)
	}
}
