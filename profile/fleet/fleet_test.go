package fleet_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/fleet"
	"github.com/profdiff/profdiff/profile/fleet/fleettest"
	"github.com/profdiff/profdiff/profile/internal/bounded"
	"github.com/profdiff/profdiff/profile/internal/memtest"
)

const cpuType = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"

var (
	recordOnce sync.Once
	recorded   [2]*pprofile.Profile
	recordErr  error
)

// profiles are two real CPU profiles of this test process, recorded once.
func profiles(t *testing.T) [2]*pprofile.Profile {
	t.Helper()
	recordOnce.Do(func() {
		for i := range recorded {
			if recorded[i], recordErr = fleettest.CPUProfile(300*time.Millisecond, i == 1); recordErr != nil {
				return
			}
		}
	})
	if recordErr != nil {
		t.Skipf("cannot record a CPU profile here: %v", recordErr)
	}
	return recorded
}

// server serves the two profiles as version v1 and v2 of service api,
// taken at t0 and t0+1m.
func server(t *testing.T, p *fleettest.Pyroscope, t0 time.Time) string {
	t.Helper()
	ps := profiles(t)
	for i, prof := range ps {
		p.Add(fleettest.Series{Name: "process_cpu", Labels: map[string]string{"service_name": "api", "version": fmt.Sprintf("v%d", i+1)}, Time: t0.Add(time.Duration(i) * time.Minute), Profile: prof})
	}
	srv := p.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func source(t *testing.T, base, selector string, from, to time.Time) *fleet.Source {
	t.Helper()
	raw := "pyroscope+" + base + "?type=" + cpuType + "&query=" + url.QueryEscape(selector) +
		"&from=" + from.UTC().Format(time.RFC3339) + "&to=" + to.UTC().Format(time.RFC3339)
	s, err := fleet.Parse(raw, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sampleTotal(p *pprofile.Profile) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[len(s.Value)-1]
	}
	return n
}

// Fetch reads the merged profile through SelectMergeStacktraces with the
// pprof format, and through SelectMergeProfile from a server without it;
// both answers hold the ingested profile's samples, names without Go type
// arguments.
func TestFetchPyroscope(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	want := profiles(t)[1]
	for _, legacy := range []bool{false, true} {
		p := &fleettest.Pyroscope{Legacy: legacy}
		base := server(t, p, t0)
		s := source(t, base, `{service_name="api",version="v2"}`, t0, t0.Add(time.Hour))
		data, err := fleet.Fetch(context.Background(), s, fleet.Options{})
		if err != nil {
			t.Fatalf("legacy %v: %v", legacy, err)
		}
		got, err := pprofile.ParseData(data)
		if err != nil {
			t.Fatal(err)
		}
		wantCalls := []string{"SelectMergeStacktraces"}
		if legacy {
			wantCalls = append(wantCalls, "SelectMergeProfile")
		}
		if calls := p.Calls(); !reflect.DeepEqual(calls, wantCalls) {
			t.Errorf("legacy %v: calls %v, want %v", legacy, calls, wantCalls)
		}
		if sampleTotal(got) != sampleTotal(want) || len(got.SampleType) != 1 || got.Period != 1e9 || got.DurationNanos != 0 {
			t.Errorf("legacy %v: total %d (want %d), %d sample types, period %d, duration %d", legacy, sampleTotal(got), sampleTotal(want), len(got.SampleType), got.Period, got.DurationNanos)
		}
		for _, f := range got.Function {
			if strings.Contains(f.Name, "[go.shape.") {
				t.Errorf("the server kept a type argument: %s", f.Name)
			}
		}
	}
}

// An empty answer, a missing tenant, a bad query and a missing server are
// each an error that says what happened.
func TestFetchPyroscopeErrors(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := &fleettest.Pyroscope{Tenant: "team-a"}
	base := server(t, p, t0)
	ctx := context.Background()
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

	_, err := fleet.Fetch(ctx, source(t, base, `{version="v2"}`, t0, t0.Add(time.Hour)), fleet.Options{Getenv: env(nil)})
	var se *fleet.StatusError
	if !errors.As(err, &se) || se.Status != 401 || !strings.Contains(err.Error(), "no org id") {
		t.Errorf("no tenant: %v", err)
	}
	ok := fleet.Options{Getenv: env(map[string]string{fleet.EnvTenant: "team-a"})}
	if _, err := fleet.Fetch(ctx, source(t, base, `{version="v2"}`, t0, t0.Add(time.Hour)), ok); err != nil {
		t.Errorf("tenant from the environment: %v", err)
	}
	_, err = fleet.Fetch(ctx, source(t, base, `{version="v9"}`, t0, t0.Add(time.Hour)), ok)
	if !errors.Is(err, fleet.ErrEmpty) || !strings.Contains(err.Error(), "nothing matched the query") {
		t.Errorf("no match: %v", err)
	}
	// Milliseconds, not seconds: a range before the series is empty too.
	if _, err := fleet.Fetch(ctx, source(t, base, `{version="v2"}`, t0.Add(-2*time.Hour), t0), ok); !errors.Is(err, fleet.ErrEmpty) {
		t.Errorf("range before the data: %v", err)
	}
	_, err = fleet.Fetch(ctx, source(t, base, `{version=~"v2"}`, t0, t0.Add(time.Hour)), ok)
	if !errors.As(err, &se) || se.Code != "invalid_argument" || !strings.Contains(err.Error(), "unsupported matcher") {
		t.Errorf("bad query: %v", err)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	_, err = fleet.Fetch(ctx, source(t, dead.URL, `{}`, t0, t0.Add(time.Hour)), ok)
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("no server: %v", err)
	}
}

// Credentials come from the environment: a bearer token, else basic auth.
func TestCredentialsFromTheEnvironment(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Scope-OrgID"))
		http.Error(w, `{"code":"unauthenticated","message":"bad token"}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	s := source(t, srv.URL, `{}`, time.Now().Add(-time.Hour), time.Now())
	s.Tenant = "from-url"
	for _, vars := range []map[string]string{
		{fleet.EnvToken: "tok", fleet.EnvUser: "ignored"},
		{fleet.EnvUser: "u", fleet.EnvPassword: "p", fleet.EnvTenant: "not-used"},
		{},
	} {
		_, err := fleet.Fetch(context.Background(), s, fleet.Options{Getenv: func(k string) string { return vars[k] }})
		if err == nil || !strings.Contains(err.Error(), "HTTP 401 Unauthorized (unauthenticated): bad token") {
			t.Errorf("err = %v", err)
		}
		if strings.Contains(fmt.Sprint(err), "tok") && vars[fleet.EnvToken] != "" && strings.Contains(err.Error(), "Bearer") {
			t.Errorf("the token leaked into the error: %v", err)
		}
	}
	want := []string{"Bearer tok|from-url", "Basic dTpw|from-url", "|from-url"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("headers %q, want %q", got, want)
	}
}

// A server that redirects forever is followed through 3 redirects, as
// URL sources and captures are, and the error names the last address.
func TestFetchRedirectLoop(t *testing.T) {
	var hops atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hops.Add(1)
		http.Redirect(w, r, fmt.Sprintf("%s/hop%d", srv.URL, n), http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	s := source(t, srv.URL, `{}`, time.Now().Add(-time.Hour), time.Now())
	_, err := fleet.Fetch(context.Background(), s, fleet.Options{})
	if want := "more than 3 redirects (the last to " + srv.URL + "/hop4)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
	if n := hops.Load(); n != 4 {
		t.Errorf("%d requests, want the first and 3 redirects", n)
	}
}

// Discover lists the server's types and labels through the JSON form of
// the protocol.
func TestDiscoverPyroscope(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := &fleettest.Pyroscope{}
	base := server(t, p, t0)
	s := source(t, base, `{}`, t0, t0.Add(time.Hour))
	cat, err := fleet.Discover(context.Background(), s, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{"process_cpu:cpu:nanoseconds:cpu:nanoseconds", "process_cpu:samples:count:cpu:nanoseconds"}
	if !reflect.DeepEqual(cat.Types, wantTypes) {
		t.Errorf("types %v, want %v", cat.Types, wantTypes)
	}
	wantLabels := []fleet.Label{{Name: "__name__", Values: []string{"process_cpu"}}, {Name: "service_name", Values: []string{"api"}}, {Name: "version", Values: []string{"v1", "v2"}}}
	if !reflect.DeepEqual(cat.Labels, wantLabels) {
		t.Errorf("labels %+v, want %+v", cat.Labels, wantLabels)
	}
}

// A Parca gateway's answer: base64 of a gzipped pprof in JSON; errors in
// grpc-gateway's shape; and the empty answer of a CPU type without :delta
// names the cause.
func TestFetchParcaGateway(t *testing.T) {
	prof := profiles(t)[0]
	var gz bytes.Buffer
	if err := prof.Write(&gz); err != nil {
		t.Fatal(err)
	}
	empty := &pprofile.Profile{SampleType: prof.SampleType, PeriodType: prof.PeriodType}
	var emptyGz bytes.Buffer
	if err := empty.Write(&emptyGz); err != nil {
		t.Fatal(err)
	}
	var asked url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.Query()
		switch q := asked.Get("merge.query"); {
		case r.URL.Path != "/api/profiles/query":
			http.NotFound(w, r)
		case strings.Contains(q, "bad"):
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"code":3,"message":"failed to parse query","details":[]}`)
		case strings.HasSuffix(strings.Split(q, "{")[0], ":delta"):
			fmt.Fprintf(w, `{"pprof":%q,"total":"1"}`, b64(gz.Bytes()))
		default:
			fmt.Fprintf(w, `{"pprof":%q}`, b64(emptyGz.Bytes()))
		}
	}))
	defer srv.Close()
	parca := func(q string) *fleet.Source {
		s, err := fleet.Parse("parca+"+srv.URL+"?query="+url.QueryEscape(q)+"&from=2026-12-01T10:00:00Z&to=2026-12-01T11:00:00Z", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx := context.Background()
	counted := fleet.Options{Decompress: profile.Decompress} // a gzipped answer's samples are counted
	data, err := fleet.Fetch(ctx, parca(`process_cpu:samples:count:cpu:nanoseconds:delta{job="api"}`), counted)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, gz.Bytes()) {
		t.Error("the answer's pprof is not the profile served")
	}
	want := url.Values{"mode": {"MODE_MERGE"}, "reportType": {"REPORT_TYPE_PPROF"}, "merge.query": {`process_cpu:samples:count:cpu:nanoseconds:delta{job="api"}`},
		"merge.start": {"2026-12-01T10:00:00Z"}, "merge.end": {"2026-12-01T11:00:00Z"}}
	if !reflect.DeepEqual(asked, want) {
		t.Errorf("asked %v, want %v", asked, want)
	}
	_, err = fleet.Fetch(ctx, parca(`process_cpu:samples:count:cpu:nanoseconds{job="api"}`), counted)
	if !errors.Is(err, fleet.ErrEmpty) || !strings.Contains(err.Error(), "needs its :delta suffix") {
		t.Errorf("no :delta: %v", err)
	}
	_, err = fleet.Fetch(ctx, parca(`bad:samples:count:cpu:nanoseconds:delta{}`), fleet.Options{})
	if err == nil || !strings.Contains(err.Error(), "HTTP 400 Bad Request (3): failed to parse query") {
		t.Errorf("bad query: %v", err)
	}
	_, err = fleet.Fetch(ctx, parca(`x:a:b:c:d:delta{}`), fleet.Options{MaxSize: 10})
	if !errors.Is(err, profile.ErrTooLarge) || !strings.Contains(err.Error(), "larger than the 10-byte limit") || strings.Contains(err.Error(), "--") {
		t.Errorf("size limit: %v", err)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// A server whose answer has no end: Fetch fails past the limit, having
// allocated the limit and little more (the client's buffers), where
// reading with io.ReadAll allocated its growing copies, 2.5 times the
// limit.
func TestFetchEndlessAnswer(t *testing.T) {
	chunk := make([]byte, 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	const limit = 4 << 20
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var err error
	var heap uint64
	mapped := bounded.MappedPeak(func() {
		heap = memtest.Allocated(func() {
			_, err = fleet.Fetch(context.Background(), source(t, srv.URL, `{}`, t0, t0.Add(time.Hour)), fleet.Options{MaxSize: limit})
		})
	})
	got := heap + uint64(mapped) // the pieces past the first are mapped outside the heap
	if !errors.Is(err, profile.ErrTooLarge) || !strings.Contains(err.Error(), "larger than the 4194304-byte limit") {
		t.Errorf("endless answer: %v, want ErrTooLarge", err)
	}
	if want := uint64(limit + limit/32 + 1<<20); got > want {
		t.Errorf("endless answer: allocated %d bytes, want at most %d", got, want)
	}
	t.Logf("allocated %d bytes for a %d-byte limit", got, limit)
}
