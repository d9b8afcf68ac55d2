package fleet

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/profdiff/profdiff/profile/internal/bounded"
	"github.com/profdiff/profdiff/profile/internal/loaderr"
	"github.com/profdiff/profdiff/profile/internal/redirect"
)

// Options control requests to a server. The zero value is usable.
type Options struct {
	// Client makes the requests (nil: a client with Timeout).
	Client *http.Client
	// Timeout bounds each request when Client is nil (0: DefaultTimeout).
	Timeout time.Duration
	// MaxSize bounds an answer's bytes (0: DefaultMaxSize).
	MaxSize int64
	// Getenv reads the credentials (nil: os.Getenv): PROFDIFF_FLEET_TOKEN
	// (a bearer token), else PROFDIFF_FLEET_USER and
	// PROFDIFF_FLEET_PASSWORD (basic auth); PROFDIFF_FLEET_TENANT is the
	// tenant when the source names none.
	Getenv func(string) string
	// CheckURL, when set, vets the server's URL before any request, and
	// every address a request is redirected to.
	CheckURL func(*url.URL) error
	// Decompress expands a gzipped answer (Parca's are) within maxSize,
	// for Fetch to count its samples: a loader passes its own gzip layer
	// (profile.Decompress), so that an answer is inflated, and its size
	// bounded, as every other profile is. Nil leaves a gzipped answer
	// uncounted: an empty one is then found when it is parsed, without
	// Fetch's hint.
	Decompress func(data []byte, maxSize int64) ([]byte, error)
}

// Defaults.
const (
	DefaultTimeout = 60 * time.Second
	DefaultMaxSize = 1 << 30
)

// The environment variables read for credentials and the tenant.
const (
	EnvToken    = "PROFDIFF_FLEET_TOKEN"
	EnvUser     = "PROFDIFF_FLEET_USER"
	EnvPassword = "PROFDIFF_FLEET_PASSWORD"
	EnvTenant   = "PROFDIFF_FLEET_TENANT"
)

// ErrEmpty is wrapped by Fetch's error when the server answered a profile
// with no samples: the query matched nothing in the range (or, on Parca,
// a delta type was asked without its :delta suffix).
var ErrEmpty = errors.New("the server answered an empty profile")

// StatusError is a server's answer that is not a success.
type StatusError struct {
	Status  int    // HTTP status
	Code    string // the protocol's error code, when it gave one
	Message string // the server's message, one line
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Fetch asks the source's server for the merged profile of its query over
// its range and returns the pprof bytes (raw or gzipped, as the server
// sent them). An answer without samples is an error wrapping ErrEmpty.
// Errors say what failed (the call, the status, the server's message) but
// not the source, which the caller names.
func Fetch(ctx context.Context, s *Source, o Options) ([]byte, error) {
	c, err := newClient(s, o)
	if err != nil {
		return nil, err
	}
	data, err := ask(ctx, s, c.pyroscopeProfile, c.parcaProfile)
	if err != nil {
		return nil, err
	}
	n, err := countSamples(data, c.maxSize, o.Decompress)
	if err != nil {
		return nil, fmt.Errorf("the answer is not a pprof profile: %w", err)
	}
	if n == 0 {
		hint := "nothing matched the query in that range"
		if s.Backend == Parca && parcaDeltaMissing(s.Query) {
			hint = "a CPU profile type needs its :delta suffix on Parca (process_cpu:samples:count:cpu:nanoseconds:delta{...}); without it Parca answers nothing"
		}
		return nil, fmt.Errorf("%w: %s", ErrEmpty, hint)
	}
	return data, nil
}

// ask calls the function of the source's backend: pyroscope or parca.
func ask[T any](ctx context.Context, s *Source, pyroscope, parca func(context.Context, *Source) (T, error)) (T, error) {
	switch s.Backend {
	case Pyroscope:
		return pyroscope(ctx, s)
	case Parca:
		return parca(ctx, s)
	}
	var zero T
	return zero, fmt.Errorf("unknown backend %q", s.Backend)
}

// parcaDeltaMissing reports a Parca query of a CPU type (period type cpu)
// without the :delta suffix.
func parcaDeltaMissing(query string) bool {
	typ, _, _ := strings.Cut(query, "{")
	parts := strings.Split(typ, ":")
	return len(parts) == 5 && parts[3] == "cpu"
}

// client is one server's requests.
type client struct {
	http    *http.Client
	server  *url.URL
	maxSize int64
	header  http.Header
}

func newClient(s *Source, o Options) (*client, error) {
	if o.CheckURL != nil {
		if err := o.CheckURL(s.Server); err != nil {
			return nil, err
		}
	}
	hc := o.Client
	if hc == nil {
		t := o.Timeout
		if t <= 0 {
			t = DefaultTimeout
		}
		hc = &http.Client{Timeout: t}
	}
	hc = redirect.Bound(hc, o.CheckURL)
	max := o.MaxSize
	if max <= 0 {
		max = DefaultMaxSize
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	h := http.Header{}
	switch tok, user := getenv(EnvToken), getenv(EnvUser); {
	case tok != "":
		h.Set("Authorization", "Bearer "+tok)
	case user != "":
		req := &http.Request{Header: http.Header{}}
		req.SetBasicAuth(user, getenv(EnvPassword))
		h.Set("Authorization", req.Header.Get("Authorization"))
	}
	tenant := s.Tenant
	if tenant == "" {
		tenant = getenv(EnvTenant)
	}
	if tenant != "" {
		h.Set("X-Scope-OrgID", tenant)
	}
	h.Set("User-Agent", "profdiff")
	return &client{http: hc, server: s.Server, maxSize: max, header: h}, nil
}

// do sends a request to path under the server and returns a successful
// answer's body, or a *StatusError.
func (c *client) do(ctx context.Context, method, path string, query url.Values, contentType string, body []byte) ([]byte, error) {
	u := *c.server
	u.Path = c.server.Path + path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the caller's message
		}
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 8192))
		return nil, fmt.Errorf("%s %s: %w", method, path, statusError(resp.StatusCode, b))
	}
	// Read as profile reads an HTTP body: refused once past the limit,
	// having held at most the limit, the Content-Length only a hint.
	b, err := bounded.ReadAll(resp.Body, c.maxSize, max(resp.ContentLength, 0), firstSize)
	switch {
	case errors.Is(err, bounded.ErrPastLimit):
		// Marked as profile.ErrTooLarge is: the caller says how to raise
		// the limit.
		return nil, loaderr.Mark(loaderr.TooLarge, fmt.Errorf("%s %s: the answer is larger than the %d-byte limit", method, path, c.maxSize))
	case err != nil:
		return nil, fmt.Errorf("%s %s: reading the answer: %v", method, path, err)
	}
	return b, nil
}

// firstSize is the most an answer's Content-Length alone makes the
// client allocate; past it the length is believed as bytes arrive.
const firstSize = 64 << 10

// statusError reads an error answer: Connect's {"code","message"},
// grpc-gateway's {"code":N,"message"}, or plain text.
func statusError(status int, body []byte) *StatusError {
	e := &StatusError{Status: status}
	var j struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &j) == nil && (j.Message != "" || len(j.Code) > 0) {
		e.Code = strings.Trim(string(j.Code), `"`)
		e.Message = j.Message
	} else {
		e.Message = strings.TrimSpace(string(body))
	}
	e.Message = loaderr.Body(e.Message, 300)
	return e
}

// parcaProfile asks Parca's REST gateway for the merged profile:
// QueryService/Query, mode MODE_MERGE, report type REPORT_TYPE_PPROF. The
// gateway answers JSON whose pprof field is the gzipped profile, base64.
func (c *client) parcaProfile(ctx context.Context, s *Source) ([]byte, error) {
	q := url.Values{}
	q.Set("mode", "MODE_MERGE")
	q.Set("reportType", "REPORT_TYPE_PPROF")
	q.Set("merge.query", s.Query)
	q.Set("merge.start", s.From.UTC().Format(time.RFC3339Nano))
	q.Set("merge.end", s.To.UTC().Format(time.RFC3339Nano))
	body, err := c.do(ctx, http.MethodGet, "/api/profiles/query", q, "", nil)
	if err != nil {
		return nil, err
	}
	var ans struct {
		Pprof *string `json:"pprof"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("GET /api/profiles/query: the answer is not JSON: %v", err)
	}
	if ans.Pprof == nil {
		return nil, errors.New("GET /api/profiles/query: the answer has no pprof report")
	}
	data, err := base64.StdEncoding.DecodeString(*ans.Pprof)
	if err != nil {
		return nil, fmt.Errorf("GET /api/profiles/query: the pprof report is not base64: %v", err)
	}
	return data, nil
}
