// Package fleettest serves Grafana Pyroscope's real query protocol on
// loopback for tests: the Connect handlers generated in Pyroscope's
// published API module (github.com/grafana/pyroscope/api, querierv1connect),
// backed by profiles the test made. Pyroscope's server cannot be built from
// the module registries (its go.mod has replace directives), so its
// protocol is what tests meet instead; the profiles merged are real, and
// the answers have Pyroscope's shape: only the selected sample type,
// period 1e9 and no duration, Go generics' type arguments dropped.
//
// Only tests import this package: it keeps the API module and its
// dependencies out of the profdiff binary.
package fleettest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	pprofile "github.com/google/pprof/profile"
	googlev1 "github.com/grafana/pyroscope/api/gen/proto/go/google/v1"
	querierv1 "github.com/grafana/pyroscope/api/gen/proto/go/querier/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/querier/v1/querierv1connect"
	typesv1 "github.com/grafana/pyroscope/api/gen/proto/go/types/v1"
	"google.golang.org/protobuf/proto"
)

// Series is one ingested profile: its labels (service_name, version, ...),
// its profile type ID's name part (process_cpu, memory, ...) and when it
// was taken.
type Series struct {
	Name    string
	Labels  map[string]string
	Time    time.Time
	Profile *pprofile.Profile
}

// Pyroscope is a protocol server over a set of series.
type Pyroscope struct {
	// Legacy makes SelectMergeStacktraces answer as a server from before
	// PROFILE_FORMAT_PPROF: a flame graph, the format ignored.
	Legacy bool
	// Tenant, when set, is required in X-Scope-OrgID (401 "no org id"
	// without it, as Pyroscope answers with multitenancy on).
	Tenant string
	// Querier makes SelectMergeProfile answer as Pyroscope's querier
	// does when asked directly (pkg/querier, Querier.SelectMergeProfile):
	// the merged profile's duration is the range asked for, end − start,
	// and its time the end, both in nanoseconds, whatever the range; a
	// request that leaves start at 0 gets a duration equal to its time.
	Querier bool

	mu     sync.Mutex
	series []Series
	calls  []string

	querierv1connect.UnimplementedQuerierServiceHandler
}

// Add ingests a series.
func (p *Pyroscope) Add(s Series) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.series = append(p.series, s)
}

// Calls are the methods called so far, in order.
func (p *Pyroscope) Calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

func (p *Pyroscope) called(m string) {
	p.mu.Lock()
	p.calls = append(p.calls, m)
	p.mu.Unlock()
}

// Start serves the protocol on 127.0.0.1 until the returned server is
// closed.
func (p *Pyroscope) Start() *httptest.Server {
	path, h := querierv1connect.NewQuerierServiceHandler(p)
	mux := http.NewServeMux()
	mux.Handle(path, h)
	var top http.Handler = mux
	if p.Tenant != "" {
		top = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Scope-OrgID") != p.Tenant {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"code":"unauthenticated","message":"no org id"}`)
				return
			}
			mux.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewUnstartedServer(top)
	srv.Start()
	return srv
}

// SelectMergeStacktraces answers the merged profile in the pprof format,
// or (Legacy, or another format asked) a flame graph.
func (p *Pyroscope) SelectMergeStacktraces(_ context.Context, r *connect.Request[querierv1.SelectMergeStacktracesRequest]) (*connect.Response[querierv1.SelectMergeStacktracesResponse], error) {
	p.called("SelectMergeStacktraces")
	m := r.Msg
	prof, err := p.merge(m.ProfileTypeID, m.LabelSelector, m.Start, m.End)
	if err != nil {
		return nil, err
	}
	if p.Legacy || m.Format != querierv1.ProfileFormat_PROFILE_FORMAT_PPROF {
		return connect.NewResponse(&querierv1.SelectMergeStacktracesResponse{Flamegraph: &querierv1.FlameGraph{Names: []string{"total"}, Total: total(prof)}}), nil
	}
	return connect.NewResponse(&querierv1.SelectMergeStacktracesResponse{Pprof: &querierv1.PprofProfile{Profile: prof}}), nil
}

// SelectMergeProfile answers the merged profile (the deprecated call).
func (p *Pyroscope) SelectMergeProfile(_ context.Context, r *connect.Request[querierv1.SelectMergeProfileRequest]) (*connect.Response[googlev1.Profile], error) {
	p.called("SelectMergeProfile")
	prof, err := p.merge(r.Msg.ProfileTypeID, r.Msg.LabelSelector, r.Msg.Start, r.Msg.End)
	if err != nil {
		return nil, err
	}
	if p.Querier {
		prof.DurationNanos = (r.Msg.End - r.Msg.Start) * 1e6 // milliseconds
		prof.TimeNanos = r.Msg.End * 1e6
	}
	return connect.NewResponse(prof), nil
}

// ProfileTypes lists the type IDs of every series' sample types.
func (p *Pyroscope) ProfileTypes(context.Context, *connect.Request[querierv1.ProfileTypesRequest]) (*connect.Response[querierv1.ProfileTypesResponse], error) {
	p.called("ProfileTypes")
	seen := map[string]*typesv1.ProfileType{}
	p.mu.Lock()
	for _, s := range p.series {
		pt := s.Profile.PeriodType
		for _, st := range s.Profile.SampleType {
			id := strings.Join([]string{s.Name, st.Type, st.Unit, pt.Type, pt.Unit}, ":")
			seen[id] = &typesv1.ProfileType{ID: id, Name: s.Name, SampleType: st.Type, SampleUnit: st.Unit, PeriodType: pt.Type, PeriodUnit: pt.Unit}
		}
	}
	p.mu.Unlock()
	resp := &querierv1.ProfileTypesResponse{}
	for _, id := range slices.Sorted(maps.Keys(seen)) {
		resp.ProfileTypes = append(resp.ProfileTypes, seen[id])
	}
	return connect.NewResponse(resp), nil
}

// LabelNames lists every label name, with __name__ as Pyroscope has it.
func (p *Pyroscope) LabelNames(context.Context, *connect.Request[typesv1.LabelNamesRequest]) (*connect.Response[typesv1.LabelNamesResponse], error) {
	p.called("LabelNames")
	seen := map[string]bool{"__name__": true}
	p.mu.Lock()
	for _, s := range p.series {
		for k := range s.Labels {
			seen[k] = true
		}
	}
	p.mu.Unlock()
	return connect.NewResponse(&typesv1.LabelNamesResponse{Names: slices.Sorted(maps.Keys(seen))}), nil
}

// LabelValues lists a label's values.
func (p *Pyroscope) LabelValues(_ context.Context, r *connect.Request[typesv1.LabelValuesRequest]) (*connect.Response[typesv1.LabelValuesResponse], error) {
	p.called("LabelValues")
	seen := map[string]bool{}
	p.mu.Lock()
	for _, s := range p.series {
		if v, ok := s.Labels[r.Msg.Name]; ok {
			seen[v] = true
		}
		if r.Msg.Name == "__name__" {
			seen[s.Name] = true
		}
	}
	p.mu.Unlock()
	return connect.NewResponse(&typesv1.LabelValuesResponse{Names: slices.Sorted(maps.Keys(seen))}), nil
}

var matcherRE = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*"([^"]*)"\s*$`)

// merge is the profile Pyroscope would answer: the series of that type
// name and sample type whose labels match the selector (equality matchers
// only) and whose time is in [start, end) milliseconds, merged, with only
// that sample type, period 1e9, no time or duration, and Go generics'
// type arguments dropped.
func (p *Pyroscope) merge(typeID, selector string, start, end int64) (*googlev1.Profile, error) {
	parts := strings.Split(typeID, ":")
	if len(parts) != 5 {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("invalid profile type ID %q", typeID))
	}
	want, err := matchers(selector)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	var picked []*pprofile.Profile
	p.mu.Lock()
	for _, s := range p.series {
		ms := s.Time.UnixMilli()
		if s.Name != parts[0] || ms < start || ms >= end || !labelsMatch(s.Labels, want) {
			continue
		}
		one, err := onlyType(s.Profile, parts[1], parts[2])
		if err == nil {
			picked = append(picked, one)
		}
	}
	p.mu.Unlock()
	merged := &pprofile.Profile{SampleType: []*pprofile.ValueType{{Type: parts[1], Unit: parts[2]}}, PeriodType: &pprofile.ValueType{Type: parts[3], Unit: parts[4]}}
	if len(picked) > 0 {
		if merged, err = pprofile.Merge(picked); err != nil {
			return nil, connect.NewError(connect.CodeInternal, err)
		}
	}
	merged.Period, merged.TimeNanos, merged.DurationNanos = 1e9, 0, 0
	for _, f := range merged.Function {
		f.Name, f.SystemName = DropShapes(f.Name), DropShapes(f.SystemName)
	}
	var buf bytes.Buffer
	if err := merged.WriteUncompressed(&buf); err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	out := &googlev1.Profile{}
	if err := proto.Unmarshal(buf.Bytes(), out); err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	return out, nil
}

func matchers(selector string) (map[string]string, error) {
	sel := strings.TrimSpace(selector)
	if !strings.HasPrefix(sel, "{") || !strings.HasSuffix(sel, "}") {
		return nil, fmt.Errorf("parse error: selector %q is not in braces", selector)
	}
	want := map[string]string{}
	body := strings.TrimSpace(sel[1 : len(sel)-1])
	if body == "" {
		return want, nil
	}
	for _, m := range strings.Split(body, ",") {
		g := matcherRE.FindStringSubmatch(m)
		if g == nil {
			return nil, fmt.Errorf("parse error: unsupported matcher %q", m)
		}
		want[g[1]] = g[2]
	}
	return want, nil
}

func labelsMatch(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// onlyType copies p keeping one sample type.
func onlyType(p *pprofile.Profile, typ, unit string) (*pprofile.Profile, error) {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == typ && st.Unit == unit {
			idx = i
		}
	}
	if idx < 0 {
		return nil, errors.New("no such sample type")
	}
	c := p.Copy()
	c.SampleType = []*pprofile.ValueType{c.SampleType[idx]}
	c.DefaultSampleType = ""
	for _, s := range c.Sample {
		s.Value = []int64{s.Value[idx]}
	}
	return c, nil
}

// DropShapes drops Go generics' type arguments as Pyroscope does
// (slices.partitionOrdered[go.shape.int] → slices.partitionOrdered,
// slices.Sort[go.shape.[]int,go.shape.int] → slices.Sort): a bracketed
// group, brackets inside it balanced, that starts with go.shape. or is
// "...".
func DropShapes(name string) string {
	for {
		i := strings.Index(name, "[go.shape.")
		if i < 0 {
			i = strings.Index(name, "[...]")
		}
		if i < 0 {
			return name
		}
		depth, j := 0, i
		for ; j < len(name); j++ {
			if name[j] == '[' {
				depth++
			} else if name[j] == ']' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		if j == len(name) {
			return name
		}
		name = name[:i] + name[j+1:]
	}
}

func total(p *googlev1.Profile) int64 {
	var t int64
	for _, s := range p.Sample {
		for _, v := range s.Value {
			t += v
		}
	}
	return t
}
