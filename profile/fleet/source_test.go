package fleet

import (
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func TestParseSources(t *testing.T) {
	for _, c := range []struct {
		raw               string
		backend           Backend
		typ, query        string
		from, to          time.Time
		windows           int
		server, tenant    string
		canonicalContains string
	}{
		{raw: `pyroscope+http://127.0.0.1:4040?type=process_cpu:cpu:nanoseconds:cpu:nanoseconds&query={service_name="api",version="v2"}&from=now-1h&to=now`,
			backend: Pyroscope, typ: "process_cpu:cpu:nanoseconds:cpu:nanoseconds", query: `{service_name="api",version="v2"}`,
			from: now.Add(-time.Hour), to: now, windows: 1, server: "http://127.0.0.1:4040",
			canonicalContains: `query={service_name="api",version="v2"}&from=2026-12-02T09:00:00Z&to=2026-12-02T10:00:00Z`},
		{raw: `parca+https://localhost:7070/prefix/?query=process_cpu:samples:count:cpu:nanoseconds:delta{job="api"}&from=2026-12-01T09:00:00Z&to=2026-12-01T11:00:00+01:00&windows=5&tenant=t1`,
			backend: Parca, query: `process_cpu:samples:count:cpu:nanoseconds:delta{job="api"}`,
			from: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), to: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), windows: 5,
			server: "https://localhost:7070/prefix", tenant: "t1",
			canonicalContains: `&to=2026-12-01T10:00:00Z&windows=5&tenant=t1`},
		{raw: `pyroscope+http://[::1]:4040?type=a:b:c:d:e&from=now-1d12h`, backend: Pyroscope, typ: "a:b:c:d:e", query: "{}",
			from: now.Add(-36 * time.Hour), to: now, windows: 1, server: "http://[::1]:4040"},
	} {
		s, err := Parse(c.raw, now)
		if err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		if s.Backend != c.backend || s.Type != c.typ || s.Query != c.query || !s.From.Equal(c.from) || !s.To.Equal(c.to) || s.Windows != c.windows || s.Server.String() != c.server || s.Tenant != c.tenant {
			t.Errorf("%s:\n got %+v (server %s)\nwant %+v", c.raw, s, s.Server, c)
		}
		back, err := Parse(s.String(), now.Add(time.Hour))
		if err != nil || back.String() != s.String() {
			t.Errorf("%s: String() %q does not read back: %v", c.raw, s.String(), err)
		}
		if !strings.Contains(s.String(), c.canonicalContains) {
			t.Errorf("String() = %q, want it to contain %q", s.String(), c.canonicalContains)
		}
	}
}

func TestParseSourceErrors(t *testing.T) {
	for raw, want := range map[string]string{
		`pyroscope+http://h:1`:                                         "type= is missing",
		`pyroscope+http://h:1?type=a:b`:                                "has 5 parts",
		`pyroscope+http://h:1?type=a:b:c:d:e&query=version="v2"`:       "in braces",
		`pyroscope+ftp://h:1?type=a:b:c:d:e`:                           "not pyroscope+ftp://",
		`pyroscope+http://?type=a:b:c:d:e`:                             "no host",
		`pyroscope+http://u:pw@h:1?type=a:b:c:d:e`:                     "credentials do not go in the URL",
		`pyroscope+http://h:1?type=a:b:c:d:e&from=yesterday`:           "from=yesterday: want now, now-DURATION",
		`pyroscope+http://h:1?type=a:b:c:d:e&from=now-0s`:              "positive duration",
		`pyroscope+http://h:1?type=a:b:c:d:e&from=now&to=now-1h`:       "is not before to",
		`pyroscope+http://h:1?type=a:b:c:d:e&windows=0`:                "windows=0: want a count from 1 to 1000",
		`pyroscope+http://h:1?type=a:b:c:d:e&window=5&zz=1`:            `unknown parameter "window"`,
		`pyroscope+http://h:1?type=a:b:c:d:e&type=x:y:z:w:v`:           "given 2 times",
		`parca+http://h:1`:                                             "query= is missing",
		`parca+http://h:1?query={job="api"}`:                           "starts with its type",
		`parca+http://h:1?query=a:b:c:d:e&type=x`:                      `unknown parameter "type"`,
		`parca+http://h:1?query=a:b:c:d:e&from=now-500ms&windows=1000`: "too short",
		`http://h:1`: "not a fleet source",
	} {
		if _, err := Parse(raw, now); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", raw, err, want)
		}
	}
}

func TestSplitWindows(t *testing.T) {
	s, err := Parse(`parca+http://h:1?query=a:b:c:d:e:delta{}&from=2026-12-01T10:00:00Z&to=2026-12-01T10:10:00Z&windows=3`, now)
	if err != nil {
		t.Fatal(err)
	}
	ws := s.Split()
	if len(ws) != 3 {
		t.Fatalf("%d windows, want 3", len(ws))
	}
	at := s.From
	for i, w := range ws {
		if !w.From.Equal(at) || w.Windows != 1 || w.Window() != 200*time.Second {
			t.Errorf("window %d: %v to %v (%d windows)", i, w.From, w.To, w.Windows)
		}
		at = w.To
	}
	if !at.Equal(s.To) {
		t.Errorf("windows end at %v, want %v", at, s.To)
	}
	if one, _ := Parse(`parca+http://h:1?query=a:b:c:d:e`, now); len(one.Split()) != 1 || one.Split()[0] != one {
		t.Error("a source of one window splits into itself")
	}
}

func TestParseTime(t *testing.T) {
	for v, want := range map[string]time.Time{
		"now":                         now,
		"now-90m":                     now.Add(-90 * time.Minute),
		"now-2d":                      now.Add(-48 * time.Hour),
		"2026-11-30T08:00:00Z":        time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		"2026-11-30T08:00:00.5-02:00": time.Date(2026, 11, 30, 10, 0, 0, 5e8, time.UTC),
	} {
		got, err := ParseTime(v, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, bad := range []string{"", "now+1h", "now-", "now-xd", "1764600000", "2026-11-30"} {
		if _, err := ParseTime(bad, now); err == nil {
			t.Errorf("ParseTime(%q) succeeded", bad)
		}
	}
}
