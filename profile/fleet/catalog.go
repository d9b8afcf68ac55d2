package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Catalog is what a server holds over a range: its profile types (as a
// source's type= for Pyroscope, as the start of query= for Parca) and its
// labels with their values, all sorted.
type Catalog struct {
	Types  []string `json:"types"`
	Labels []Label  `json:"labels"`
}

// Label is a label name and its values.
type Label struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// MaxLabels bounds the labels Discover asks values for.
const MaxLabels = 200

// Discover lists the profile types and labels the source's server has in
// the source's range (its query and windows are not used). The result is
// sorted, so its output is stable.
func Discover(ctx context.Context, s *Source, o Options) (*Catalog, error) {
	c, err := newClient(s, o)
	if err != nil {
		return nil, err
	}
	cat, err := ask(ctx, s, c.pyroscopeCatalog, c.parcaCatalog)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", s.Backend, s.Server.Redacted(), err)
	}
	sort.Strings(cat.Types)
	sort.Slice(cat.Labels, func(i, j int) bool { return cat.Labels[i].Name < cat.Labels[j].Name })
	for i := range cat.Labels {
		sort.Strings(cat.Labels[i].Values)
	}
	return cat, nil
}

// pyroscopeCatalog calls ProfileTypes, LabelNames and LabelValues, in
// the Connect protocol's JSON form (protojson: camelCase keys, int64
// milliseconds as strings).
func (c *client) pyroscopeCatalog(ctx context.Context, s *Source) (*Catalog, error) {
	start, end := strconv.FormatInt(s.From.UnixMilli(), 10), strconv.FormatInt(s.To.UnixMilli(), 10)
	var types struct {
		ProfileTypes []struct {
			ID string `json:"ID"`
		} `json:"profileTypes"`
	}
	if err := c.connectJSON(ctx, "ProfileTypes", map[string]any{"start": start, "end": end}, &types); err != nil {
		return nil, err
	}
	cat := &Catalog{}
	for _, t := range types.ProfileTypes {
		cat.Types = append(cat.Types, t.ID)
	}
	var names struct {
		Names []string `json:"names"`
	}
	if err := c.connectJSON(ctx, "LabelNames", map[string]any{"start": start, "end": end}, &names); err != nil {
		return nil, err
	}
	for _, name := range limitLabels(names.Names) {
		var vals struct {
			Names []string `json:"names"`
		}
		if err := c.connectJSON(ctx, "LabelValues", map[string]any{"name": name, "start": start, "end": end}, &vals); err != nil {
			return nil, err
		}
		cat.Labels = append(cat.Labels, Label{Name: name, Values: vals.Names})
	}
	return cat, nil
}

// connectJSON makes one unary Connect call with JSON bodies.
func (c *client) connectJSON(ctx context.Context, method string, req, ans any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	out, err := c.do(ctx, http.MethodPost, pyroService+method, nil, "application/json", body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, ans); err != nil {
		return fmt.Errorf("%s: the answer is not the JSON expected: %v", method, err)
	}
	return nil
}

// parcaCatalog calls the gateway's /profiles/types, /profiles/labels and
// /profiles/labels/NAME/values.
func (c *client) parcaCatalog(ctx context.Context, s *Source) (*Catalog, error) {
	q := url.Values{}
	q.Set("start", s.From.UTC().Format(time.RFC3339Nano))
	q.Set("end", s.To.UTC().Format(time.RFC3339Nano))
	var types struct {
		Types []struct {
			Name       string `json:"name"`
			SampleType string `json:"sampleType"`
			SampleUnit string `json:"sampleUnit"`
			PeriodType string `json:"periodType"`
			PeriodUnit string `json:"periodUnit"`
			Delta      bool   `json:"delta"`
		} `json:"types"`
	}
	if err := c.getJSON(ctx, "/api/profiles/types", q, &types); err != nil {
		return nil, err
	}
	cat := &Catalog{}
	for _, t := range types.Types {
		id := strings.Join([]string{t.Name, t.SampleType, t.SampleUnit, t.PeriodType, t.PeriodUnit}, ":")
		if t.Delta {
			id += ":delta"
		}
		cat.Types = append(cat.Types, id)
	}
	var labels struct {
		LabelNames []string `json:"labelNames"`
	}
	if err := c.getJSON(ctx, "/api/profiles/labels", q, &labels); err != nil {
		return nil, err
	}
	for _, name := range limitLabels(labels.LabelNames) {
		var vals struct {
			LabelValues []string `json:"labelValues"`
		}
		if err := c.getJSON(ctx, "/api/profiles/labels/"+url.PathEscape(name)+"/values", q, &vals); err != nil {
			return nil, err
		}
		cat.Labels = append(cat.Labels, Label{Name: name, Values: vals.LabelValues})
	}
	return cat, nil
}

func (c *client) getJSON(ctx context.Context, path string, q url.Values, v any) error {
	body, err := c.do(ctx, http.MethodGet, path, q, "", nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: the answer is not the JSON expected: %v", path, err)
	}
	return nil
}

// limitLabels keeps the first MaxLabels names, sorted.
func limitLabels(names []string) []string {
	names = append([]string(nil), names...)
	sort.Strings(names)
	if len(names) > MaxLabels {
		names = names[:MaxLabels]
	}
	return names
}
