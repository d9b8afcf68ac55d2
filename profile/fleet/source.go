// Package fleet reads merged profiles from continuous profilers, Grafana
// Pyroscope and Parca, so that either side of a comparison can be "what
// the fleet recorded" rather than a file.
//
// A source names a server, a query and a time range:
//
//	pyroscope+http://127.0.0.1:4040?type=process_cpu:cpu:nanoseconds:cpu:nanoseconds&query={service_name="api",version="v2"}&from=now-1h&to=now
//	parca+http://127.0.0.1:7070?query=process_cpu:samples:count:cpu:nanoseconds:delta{job="api"}&from=2026-12-01T10:00:00Z&to=2026-12-01T11:00:00Z
//
// The server merges every profile the query matches in the range and
// answers one pprof profile (Fetch); profdiff computes buckets, notes,
// verdicts and gates from it as from a file. With windows=N the range is
// split into N equal windows, one merged profile each (Split): the
// observations a gate's statistical test needs.
//
// The package speaks each server's own wire protocol with net/http and
// protowire and imports no generated code: Pyroscope's Connect protocol
// (SelectMergeStacktraces with the pprof format, falling back to
// SelectMergeProfile on servers without it), Parca's REST gateway
// (QueryService/Query in merge mode with the pprof report type). Secrets
// come from the environment alone (Options.Getenv), never from the
// source, so they are never printed.
package fleet

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Backend is a kind of server.
type Backend string

// The backends.
const (
	Pyroscope Backend = "pyroscope"
	Parca     Backend = "parca"
)

// MaxWindows bounds windows=N.
const MaxWindows = 1000

// Source is one parsed source: a server, a query and an absolute time
// range.
type Source struct {
	Backend Backend
	// Server is the server's base URL (scheme, host and any path prefix,
	// such as Grafana's data-source proxy), without the source's query.
	Server *url.URL
	// Type is Pyroscope's profile type ID
	// (name:sample_type:sample_unit:period_type:period_unit); "" for
	// Parca, whose query carries the type.
	Type string
	// Query is Pyroscope's label selector ({service_name="api"}) or
	// Parca's whole query (process_cpu:samples:count:cpu:nanoseconds:delta{job="api"}).
	Query string
	// From and To are the range, To after From.
	From, To time.Time
	// Windows is how many equal windows the range is split into, each a
	// profile of its own (1: one merged profile).
	Windows int
	// Tenant is sent as X-Scope-OrgID ("" sends the environment's
	// PROFDIFF_FLEET_TENANT, if set).
	Tenant string
}

// IsSource reports whether s names a fleet source (pyroscope+http://...,
// parca+https://...).
func IsSource(s string) bool {
	_, _, ok := scheme(s)
	return ok
}

func scheme(s string) (Backend, string, bool) {
	for _, b := range []Backend{Pyroscope, Parca} {
		if rest, ok := strings.CutPrefix(s, string(b)+"+"); ok {
			return b, rest, true
		}
	}
	return "", "", false
}

// DefaultRange is the range a source without from= covers: the last hour.
const DefaultRange = time.Hour

// Parse reads a source. Relative times (now, now-1h, now-90m, now-2d) are
// taken from now; absolute ones are RFC 3339. Unknown parameters are an
// error, so a typo does not silently widen a query.
func Parse(raw string, now time.Time) (*Source, error) {
	b, rest, ok := scheme(raw)
	if !ok {
		return nil, fmt.Errorf("%q is not a fleet source (want pyroscope+http://HOST:PORT?... or parca+http://HOST:PORT?...)", raw)
	}
	u, err := url.Parse(rest)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s source: %v", b, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%s source: want %s+http:// or %s+https://, not %s+%s://", b, b, b, b, u.Scheme)
	case u.Host == "":
		return nil, fmt.Errorf("%s source: the URL has no host", b)
	case u.User != nil:
		return nil, fmt.Errorf("%s source: credentials do not go in the URL; set PROFDIFF_FLEET_TOKEN, or PROFDIFF_FLEET_USER and PROFDIFF_FLEET_PASSWORD", b)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("%s source: bad query string: %v", b, err)
	}
	s := &Source{Backend: b, Windows: 1}
	server := *u
	server.RawQuery, server.Fragment = "", ""
	server.Path = strings.TrimSuffix(server.Path, "/")
	s.Server = &server
	if err := s.params(q, now); err != nil {
		return nil, fmt.Errorf("%s source: %v", b, err)
	}
	return s, nil
}

// params reads the source's parameters.
func (s *Source) params(q url.Values, now time.Time) error {
	known := map[string]bool{"query": true, "from": true, "to": true, "windows": true, "tenant": true}
	if s.Backend == Pyroscope {
		known["type"] = true
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first unknown one named is always the same
	for _, k := range keys {
		v := q[k]
		if !known[k] {
			return fmt.Errorf("unknown parameter %q (%s sources take %s)", k, s.Backend, strings.Join(paramNames(s.Backend), ", "))
		}
		if len(v) > 1 {
			return fmt.Errorf("parameter %q given %d times", k, len(v))
		}
	}
	s.Type, s.Query, s.Tenant = q.Get("type"), strings.TrimSpace(q.Get("query")), q.Get("tenant")
	switch s.Backend {
	case Pyroscope:
		if s.Type == "" {
			return errors.New("type= is missing: the profile type ID, e.g. type=process_cpu:cpu:nanoseconds:cpu:nanoseconds (profdiff sources lists a server's)")
		}
		if n := len(strings.Split(s.Type, ":")); n != 5 {
			return fmt.Errorf("type=%s: a profile type ID has 5 parts, name:sample_type:sample_unit:period_type:period_unit, not %d", s.Type, n)
		}
		if s.Query == "" {
			s.Query = "{}"
		}
		if !strings.HasPrefix(s.Query, "{") || !strings.HasSuffix(s.Query, "}") {
			return fmt.Errorf("query=%s: a label selector is in braces, e.g. {service_name=\"api\"}", s.Query)
		}
	case Parca:
		if s.Query == "" {
			return errors.New("query= is missing: the profile type and a selector, e.g. query=process_cpu:samples:count:cpu:nanoseconds:delta{job=\"api\"} (profdiff sources lists a server's types)")
		}
		typ, _, _ := strings.Cut(s.Query, "{")
		if n := len(strings.Split(typ, ":")); n != 5 && n != 6 {
			return fmt.Errorf("query=%s: a Parca query starts with its type, name:sample_type:sample_unit:period_type:period_unit[:delta], then an optional {selector}", s.Query)
		}
	}
	var err error
	s.To = now
	if v := q.Get("to"); v != "" {
		if s.To, err = ParseTime(v, now); err != nil {
			return fmt.Errorf("to=%s: %v", v, err)
		}
	}
	s.From = s.To.Add(-DefaultRange)
	if v := q.Get("from"); v != "" {
		if s.From, err = ParseTime(v, now); err != nil {
			return fmt.Errorf("from=%s: %v", v, err)
		}
	}
	if !s.From.Before(s.To) {
		return fmt.Errorf("from (%s) is not before to (%s)", s.From.UTC().Format(time.RFC3339), s.To.UTC().Format(time.RFC3339))
	}
	if v := q.Get("windows"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxWindows {
			return fmt.Errorf("windows=%s: want a count from 1 to %d", v, MaxWindows)
		}
		if s.To.Sub(s.From)/time.Duration(n) < time.Millisecond {
			return fmt.Errorf("windows=%d: the range is too short for that many windows of at least a millisecond", n)
		}
		s.Windows = n
	}
	return nil
}

func paramNames(b Backend) []string {
	if b == Pyroscope {
		return []string{"type", "query", "from", "to", "windows", "tenant"}
	}
	return []string{"query", "from", "to", "windows", "tenant"}
}

// ParseTime reads now, now-DURATION (Go durations, plus d for days:
// now-1h, now-90m, now-2d, now-1d12h) or an RFC 3339 time.
func ParseTime(v string, now time.Time) (time.Time, error) {
	// A "+01:00" offset typed into a query string reads back as " 01:00".
	v = strings.ReplaceAll(v, " ", "+")
	if v == "now" {
		return now, nil
	}
	if rest, ok := strings.CutPrefix(v, "now-"); ok {
		d, err := parseDuration(rest)
		if err != nil || d <= 0 {
			return time.Time{}, errors.New("want now-DURATION with a positive duration, e.g. now-1h, now-30m, now-2d")
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, errors.New("want now, now-DURATION (now-1h) or an RFC 3339 time (2026-12-01T10:00:00Z)")
	}
	return t, nil
}

// parseDuration is time.ParseDuration with a leading count of days (2d,
// 1d12h).
func parseDuration(s string) (time.Duration, error) {
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || n > 3650 {
			return 0, fmt.Errorf("bad day count in %q", s)
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	return days + d, err
}

// Window is the length of the source's range (each window's, after
// Split).
func (s *Source) Window() time.Duration { return s.To.Sub(s.From) }

// Split returns the source's windows, each a source of one window with
// absolute times: Windows sources, or the source itself when it has one.
func (s *Source) Split() []*Source {
	if s.Windows <= 1 {
		return []*Source{s}
	}
	out := make([]*Source, s.Windows)
	step := s.Window() / time.Duration(s.Windows)
	for i := range out {
		w := *s
		w.Windows = 1
		w.From = s.From.Add(time.Duration(i) * step)
		w.To = w.From.Add(step)
		if i == s.Windows-1 {
			w.To = s.To
		}
		out[i] = &w
	}
	return out
}

// String is the source with absolute times, as Parse reads it back:
// type, query, from, to, then windows and tenant when set, with the
// selector's braces, quotes and commas left readable.
func (s *Source) String() string {
	var b strings.Builder
	b.WriteString(string(s.Backend) + "+" + s.Server.String() + "?")
	param := func(k, v string) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "?") {
			b.WriteByte('&')
		}
		b.WriteString(k + "=" + readable.Replace(url.QueryEscape(v)))
	}
	if s.Type != "" {
		param("type", s.Type)
	}
	param("query", s.Query)
	param("from", formatTime(s.From))
	param("to", formatTime(s.To))
	if s.Windows > 1 {
		param("windows", strconv.Itoa(s.Windows))
	}
	if s.Tenant != "" {
		param("tenant", s.Tenant)
	}
	return b.String()
}

// readable undoes the escaping of characters a query string may hold as
// they are, so that a source prints as users type it.
var readable = strings.NewReplacer("%7B", "{", "%7D", "}", "%22", `"`, "%3D", "=", "%2C", ",", "%3A", ":", "%2F", "/", "%7E", "~", "%21", "!")

// formatTime is RFC 3339 in UTC, with fractions of a second only when the
// time has them.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
