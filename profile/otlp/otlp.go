// Package otlp reads OpenTelemetry profiles: the OTLP profiles signal
// (ProfilesData, or an ExportProfilesServiceRequest, which has the same
// fields), in protobuf or in OTLP's JSON mapping.
//
// # Version
//
// The signal is in development and its messages change between releases.
// The reader decodes with the Collector's pdata/pprofile v0.165.0
// (go.opentelemetry.io/collector/pdata/pprofile), which reads the messages
// of opentelemetry-proto v1.10.0 (profiles/v1development): one dictionary
// for the whole message (string, function, location, mapping, stack, link
// and attribute tables), one sample type per profile, and samples that
// point at a stack with values, timestamps or both. Files of the earlier
// layouts (a string table in each profile, location_indices in each
// sample) are not read: their indexes point into tables that the
// message's dictionary does not have, which the reader says, or they
// give no samples.
//
// The test files are Go profiles converted by the OpenTelemetry Collector
// contrib translator (pkg/translator/pprof, ConvertPprofToProfiles, the
// conversion of the Collector's pprof receiver), built from its source
// with pdata/pprofile v0.165.0, and by pdata's own dictionary helpers;
// testdata/README.md says how, and what the translator does not carry.
//
// # What becomes of it
//
// Every profile of every resource and scope goes into one pprof profile.
// Each distinct sample type (type and unit) is a sample type of it, in the
// order they first appear; profiles with the same sample type add up.
// Samples with the same stack and the same attributes are one pprof
// sample, whichever profiles they come from, with each profile's value in
// its own sample type's column, so a pprof profile converted to OTLP (one
// OTLP profile per pprof sample type) reads back as the pprof it was.
//
// A sample's value is the sum of its values; a sample with timestamps but
// no values counts one per timestamp, as the specification says.
// Sample attributes become labels: strings, booleans and doubles as string
// labels, integers as numeric labels with the attribute's unit, and
// thread.name as the thread label of the label contract. Resource attributes (service.name,
// host.name, ...) describe who was profiled, not a sample: they become the
// profile's comments, one per resource. Links to trace spans are not kept.
//
// What a pprof profile holds beyond its samples, the Collector contrib
// translator writes as attributes, and they are read back: a profile's
// pprof.profile.comment.N attributes are comments (in N order, each once
// however many profiles repeat it), pprof.profile.drop_frames, keep_frames
// and doc_url the pprof fields; a mapping's
// process.executable.build_id.* attribute is its build ID and its
// pprof.mapping.has_functions, has_filenames, has_line_numbers and
// has_inline_frames set the pprof flags.
//
// The period and its type are those of the first profile that has one;
// the time is the earliest profile start, the duration reaches to the
// latest profile end.
//
// # Limits
//
// Memory stays bounded by the file: an OTLP sample has one sample type,
// a pprof sample a value for every type, so a file whose samples and
// sample types would make more than 4 values per byte of it (and over a
// million) is refused with ErrShape, and so is JSON nested deeper than
// 512 levels (about 100 nested attribute values, where pdata's protobuf
// decoder stops too).
package otlp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pcommon"
	otlp "go.opentelemetry.io/collector/pdata/pprofile"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/jsonsniff"
	"github.com/profdiff/profdiff/profile/internal/labels"
	"github.com/profdiff/profdiff/profile/internal/protoscan"
)

// ErrShape marks a file that looks like OTLP profiles but is not a
// readable one: bad protobuf or JSON, an index out of its table, values
// that overflow.
var ErrShape = errors.New("malformed OTLP profiles")

// Looks reports whether data is OTLP profiles, in protobuf (see
// looksProto) or in JSON (see looksJSON).
func Looks(data []byte) bool { return looksProto(data) || looksJSON(data) }

// looksProto reports whether data is a ProfilesData protobuf: top-level
// fields 1 (resource_profiles) and 2 (dictionary) only, both messages,
// with a resource whose content starts as a ResourceProfiles does (with a
// message field, 1 to 3), or a dictionary first (as pdata writes it) that
// starts with one of its tables (1 to 7). A pprof profile.proto uses the
// same field numbers (sample_type is 1, sample is 2), but it starts with a
// sample type, which starts with a number, and it always has its string
// table, field 6. A file cut short is OTLP when what came before the cut
// said so, so that the parser says what is wrong with it; a field of 2 GiB
// or more is no protobuf's, and pprof's decoder judges it.
func looksProto(data []byte) bool {
	otlp := false
	for first := true; len(data) > 0; first = false {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 || typ != protowire.BytesType || (num != 1 && num != 2) {
			return false
		}
		size, k := protowire.ConsumeVarint(data[n:])
		if k < 0 || size >= 1<<31 {
			return otlp && k < 0 // a protobuf message is under 2 GiB
		}
		body := data[n+k:]
		switch {
		case num == 1 && size > 0 && !startsWithMessage(body, 3):
			return false // a pprof sample type, at once: no walk over its samples
		case num == 1 && size > 0, num == 2 && first && (size == 0 || startsWithMessage(body, 7)):
			otlp = true // an empty dictionary is read, and found to hold nothing
		}
		if size > uint64(len(body)) {
			return otlp // cut short
		}
		data = body[size:]
	}
	return otlp
}

// startsWithMessage reports whether b starts with the tag of a message
// (or string) field numbered 1 to last.
func startsWithMessage(b []byte, last protowire.Number) bool {
	num, typ, n := protowire.ConsumeTag(b)
	return n > 0 && typ == protowire.BytesType && num >= 1 && num <= last
}

// looksJSON reports whether data is a JSON object whose first key is one
// of ProfilesData's (OTLP JSON uses the lowerCamelCase names).
func looksJSON(data []byte) bool {
	t, ok := jsonsniff.Object(bytes.TrimPrefix(data, []byte("\uFEFF")))
	if !ok {
		return false
	}
	d := json.NewDecoder(bytes.NewReader(t))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	key, err := d.Token()
	if err != nil {
		return false
	}
	switch key {
	case "resourceProfiles", "dictionary":
		return true
	}
	return false
}

// Parse reads OTLP profiles, protobuf or JSON, into one pprof profile (see
// the package doc). Warnings say what was dropped or differed.
func Parse(data []byte) (*pprofile.Profile, []string, error) {
	var pd otlp.Profiles
	var err error
	if t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\uFEFF")), " \t\r\n"); len(t) > 0 && t[0] == '{' {
		if at := tooDeep(t); at >= 0 {
			return nil, nil, fmt.Errorf("%w: invalid JSON: nested deeper than %d levels at byte %d", ErrShape, maxJSONDepth, at+len(data)-len(t))
		}
		// Fields it does not know are skipped, as OTLP/JSON asks.
		if pd, err = (&otlp.JSONUnmarshaler{}).UnmarshalProfiles(t); err != nil {
			// pdata's decoder words a syntax error by its own buffer
			// ("found \x00" at the end of a file cut short), with no
			// place in the file: encoding/json's scanner says where.
			var raw json.RawMessage
			var se *json.SyntaxError
			if errors.As(json.Unmarshal(t, &raw), &se) {
				return nil, nil, fmt.Errorf("%w: invalid JSON at byte %d: %v", ErrShape, se.Offset+int64(len(data)-len(t)), se)
			}
			return nil, nil, fmt.Errorf("%w: invalid JSON: %v", ErrShape, err)
		}
	} else if pd, err = (&otlp.ProtoUnmarshaler{}).UnmarshalProfiles(data); err != nil {
		return nil, nil, fmt.Errorf("%w: invalid protobuf: %s", ErrShape, protoscan.Explain(data, err.Error()))
	}
	c := &converter{dict: pd.Dictionary(), b: build.New[int32, int32](nil), types: map[typeKey]int{}, samples: map[string]*pprofile.Sample{},
		cellBudget: max(minCells, cellsPerByte*len(data))}
	if err := c.convert(pd); err != nil {
		return nil, nil, err
	}
	return c.b.P, c.warnings, nil
}

// maxJSONDepth bounds the nesting of OTLP/JSON. pdata's JSON decoder
// recurses into nested attribute values without a limit (its protobuf
// decoder stops at 100 values deep), so a deep enough file would exhaust
// the stack; 100 nested values take about 400 levels of JSON.
const maxJSONDepth = 512

// tooDeep returns the offset in JSON data where its objects and arrays
// nest deeper than maxJSONDepth, or -1.
func tooDeep(data []byte) int {
	depth, inString, escaped := 0, false, false
	for i, b := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > maxJSONDepth {
				return i
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return -1
}

// typeKey is a sample type, by its strings.
type typeKey struct{ typ, unit string }

// converter builds the pprof profile of one message.
type converter struct {
	dict     otlp.ProfilesDictionary
	b        *build.Builder[int32, int32] // functions and locations by their table index
	mappings map[int32]*pprofile.Mapping
	types    map[typeKey]int // sample type → its column
	// samples are the pprof samples by stack and labels (sampleKey), so
	// that one stack's values from several profiles share a sample.
	samples map[string]*pprofile.Sample
	// cells counts the values of all samples, which a file with many
	// sample types could make far more of than it has bytes (each OTLP
	// sample has one type, each pprof sample a value for every type): past
	// cellBudget the file is refused.
	cells, cellBudget int
	start             uint64 // earliest profile start, 0 if none
	end               uint64 // latest profile end
	warnings          []string
}

func (c *converter) convert(pd otlp.Profiles) error {
	p := c.b.P
	for ri, rp := range pd.ResourceProfiles().All() {
		if note := resourceNote(rp.Resource().Attributes()); note != "" {
			p.Comments = append(p.Comments, note)
		}
		for si, sp := range rp.ScopeProfiles().All() {
			for pi, prof := range sp.Profiles().All() {
				where := fmt.Sprintf("resource %d, scope %d, profile %d", ri, si, pi)
				if err := c.profile(prof, where); err != nil {
					return err
				}
			}
		}
	}
	if c.start > 0 {
		p.TimeNanos = int64(min(c.start, math.MaxInt64))
		p.DurationNanos = int64(min(c.end-c.start, math.MaxInt64))
	}
	// Every sample gets a value per sample type (0 for the types its
	// profiles did not have).
	for _, s := range p.Sample {
		if err := c.grow(s, len(p.SampleType)); err != nil {
			return err
		}
	}
	return nil
}

// profile adds one OTLP profile's samples.
func (c *converter) profile(prof otlp.Profile, where string) error {
	p := c.b.P
	st, err := c.valueType(prof.SampleType(), where+" sample_type")
	if err != nil {
		return err
	}
	key := typeKey{st.Type, st.Unit}
	col, ok := c.types[key]
	if !ok {
		col = len(p.SampleType)
		c.types[key] = col
		p.SampleType = append(p.SampleType, st)
	}
	if pt := prof.PeriodType(); prof.Period() != 0 || pt.TypeStrindex() != 0 || pt.UnitStrindex() != 0 {
		pt, err := c.valueType(pt, where+" period_type")
		if err != nil {
			return err
		}
		switch {
		case p.PeriodType == nil:
			p.PeriodType, p.Period = pt, prof.Period()
		case p.Period != prof.Period() || *p.PeriodType != *pt:
			c.warn(fmt.Sprintf("OTLP profiles with different periods: the first (%d %s/%s) is kept",
				p.Period, p.PeriodType.Type, p.PeriodType.Unit))
		}
	}
	if err := c.profileAttributes(prof, where); err != nil {
		return err
	}
	if t := uint64(prof.Time()); t > 0 {
		if c.start == 0 || t < c.start {
			c.start = t
		}
		end := t + prof.DurationNano()
		if end < t { // wrapped
			end = math.MaxUint64
		}
		c.end = max(c.end, end)
	}
	for i, s := range prof.Samples().All() {
		if err := c.sample(s, col, where, i); err != nil {
			return err
		}
	}
	return nil
}

// sample adds one OTLP sample's value to the pprof sample of its stack and
// labels, in column col.
func (c *converter) sample(s otlp.Sample, col int, profile string, i int) error {
	where := func() string { return fmt.Sprintf("%s sample %d", profile, i) }
	var v int64
	if s.Values().Len() == 0 {
		v = int64(s.TimestampsUnixNano().Len()) // one per timestamp
	}
	for _, x := range s.Values().All() {
		var ok bool
		if v, ok = add(v, x); !ok {
			return fmt.Errorf("%w: %s: values overflow a 64-bit integer", ErrShape, where())
		}
	}
	if v == 0 {
		return nil
	}
	lab, num, unit, err := c.attributes(s.AttributeIndices(), where)
	if err != nil {
		return err
	}
	k := sampleKey(s.StackIndex(), lab, num, unit)
	ps, ok := c.samples[k]
	if !ok {
		locs, err := c.stack(s.StackIndex(), where)
		if err != nil {
			return err
		}
		ps = &pprofile.Sample{Location: locs, Label: lab, NumLabel: num, NumUnit: unit}
		c.samples[k] = ps
		c.b.AddSample(ps)
	}
	if err := c.grow(ps, col+1); err != nil {
		return err
	}
	if ps.Value[col], ok = add(ps.Value[col], v); !ok {
		return fmt.Errorf("%w: %s: the stack's total overflows a 64-bit integer", ErrShape, where())
	}
	return nil
}

// The memory bound of the values (see converter.cells): 4 values per byte
// of the file (32 bytes of values per byte), and a million in any file.
const (
	cellsPerByte = 4
	minCells     = 1 << 20
)

// grow gives s at least n values, within the budget.
func (c *converter) grow(s *pprofile.Sample, n int) error {
	if more := n - len(s.Value); more > 0 {
		if c.cells += more; c.cells > c.cellBudget {
			return fmt.Errorf("%w: %d samples with %d sample types make more values than the file's size allows (%d)",
				ErrShape, len(c.b.P.Sample), len(c.b.P.SampleType), c.cellBudget)
		}
		s.Value = append(s.Value, make([]int64, more)...)
	}
	return nil
}

// add returns a+b and whether it did not overflow.
func add(a, b int64) (int64, bool) {
	s := a + b
	return s, (b >= 0) == (s >= a)
}

// sampleKey is what makes two samples one: the stack and the labels,
// each key followed by its number of values and each string preceded by
// its length, so that no two label sets write the same key.
func sampleKey(stack int32, lab map[string][]string, num map[string][]int64, unit map[string][]string) string {
	b := strconv.AppendInt(nil, int64(stack), 10)
	str := func(s string) {
		b = strconv.AppendInt(append(b, ' '), int64(len(s)), 10)
		b = append(append(b, ':'), s...)
	}
	for _, k := range slices.Sorted(maps.Keys(lab)) {
		str(k)
		b = strconv.AppendInt(append(b, '*'), int64(len(lab[k])), 10)
		for _, v := range lab[k] {
			str(v)
		}
	}
	b = append(b, '#')
	for _, k := range slices.Sorted(maps.Keys(num)) {
		str(k)
		b = strconv.AppendInt(append(b, '*'), int64(len(num[k])), 10)
		for j, v := range num[k] {
			b = strconv.AppendInt(append(b, ' '), v, 10)
			str(unit[k][j])
		}
	}
	return string(b)
}

// place says where in the file something is, made only for an error.
type place func() string

// fixed is the place of a string made already.
func fixed(where string) place { return func() string { return where } }

// stack returns the pprof locations of stack_table[i], leaf first as in
// both formats.
func (c *converter) stack(i int32, where place) ([]*pprofile.Location, error) {
	table := c.dict.StackTable()
	if i < 0 || int(i) >= table.Len() {
		return nil, outOfRange(where()+" stack_index", i, "stack_table", table.Len())
	}
	idx := table.At(int(i)).LocationIndices()
	locs := make([]*pprofile.Location, 0, idx.Len())
	for _, li := range idx.All() {
		l, err := c.location(li, func() string { return fmt.Sprintf("stack_table[%d]", i) })
		if err != nil {
			return nil, err
		}
		locs = append(locs, l)
	}
	return locs, nil
}

// location returns the pprof location of location_table[i], made once.
func (c *converter) location(i int32, where place) (*pprofile.Location, error) {
	if l, ok := c.b.Location(i); ok {
		return l, nil
	}
	table := c.dict.LocationTable()
	if i < 0 || int(i) >= table.Len() {
		return nil, outOfRange(where()+" location index", i, "location_table", table.Len())
	}
	ol := table.At(int(i))
	at := fmt.Sprintf("location_table[%d]", i)
	m, err := c.mapping(ol.MappingIndex(), at)
	if err != nil {
		return nil, err
	}
	l := &pprofile.Location{Mapping: m, Address: ol.Address()}
	for _, ln := range ol.Lines().All() {
		fn, err := c.function(ln.FunctionIndex(), at)
		if err != nil {
			return nil, err
		}
		l.Line = append(l.Line, pprofile.Line{Function: fn, Line: ln.Line(), Column: ln.Column()})
	}
	return c.b.AddLocationAs(i, l), nil
}

// function returns the pprof function of function_table[i], made once.
func (c *converter) function(i int32, where string) (*pprofile.Function, error) {
	table := c.dict.FunctionTable()
	if i < 0 || int(i) >= table.Len() {
		return nil, outOfRange(where+" function_index", i, "function_table", table.Len())
	}
	f := table.At(int(i))
	where = fmt.Sprintf("function_table[%d]", i)
	var name, sys, file string
	if err := c.strs(fixed(where), strRef{f.NameStrindex(), "name", &name}, strRef{f.SystemNameStrindex(), "system_name", &sys},
		strRef{f.FilenameStrindex(), "filename", &file}); err != nil {
		return nil, err
	}
	return c.b.Function(i, pprofile.Function{Name: name, SystemName: sys, Filename: file, StartLine: f.StartLine()}), nil
}

// mapping returns the pprof mapping of mapping_table[i], made once; index
// 0, the table's zero entry, is no mapping.
func (c *converter) mapping(i int32, where string) (*pprofile.Mapping, error) {
	if i == 0 {
		return nil, nil
	}
	if m, ok := c.mappings[i]; ok {
		return m, nil
	}
	table := c.dict.MappingTable()
	if i < 0 || int(i) >= table.Len() {
		return nil, outOfRange(where+" mapping_index", i, "mapping_table", table.Len())
	}
	om := table.At(int(i))
	where = fmt.Sprintf("mapping_table[%d]", i)
	var file string
	if err := c.strs(fixed(where), strRef{om.FilenameStrindex(), "filename", &file}); err != nil {
		return nil, err
	}
	m := c.b.AddMapping(&pprofile.Mapping{Start: om.MemoryStart(), Limit: om.MemoryLimit(), Offset: om.FileOffset(), File: file})
	// Its build ID, where the producer gives one, is an attribute
	// (process.executable.build_id.gnu, .go or .htlhash).
	lab, _, _, err := c.attributes(om.AttributeIndices(), fixed(where))
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(lab)) {
		if strings.HasPrefix(k, "process.executable.build_id") && m.BuildID == "" {
			m.BuildID = lab[k][0]
		}
	}
	// pprof's flags of what a mapping's symbols hold, as the contrib
	// translator writes them (true when present).
	for flag, to := range map[string]*bool{
		"pprof.mapping.has_functions":     &m.HasFunctions,
		"pprof.mapping.has_filenames":     &m.HasFilenames,
		"pprof.mapping.has_line_numbers":  &m.HasLineNumbers,
		"pprof.mapping.has_inline_frames": &m.HasInlineFrames,
	} {
		*to = slices.Contains(lab[flag], "true")
	}
	if c.mappings == nil {
		c.mappings = map[int32]*pprofile.Mapping{}
	}
	c.mappings[i] = m
	return m, nil
}

// profileAttributes keeps what a pprof profile converted to OTLP by the
// Collector contrib translator holds in the profile's attributes: its
// comments (pprof.profile.comment.0, .1, ...), each once however many
// profiles repeat it, and its drop_frames, keep_frames and doc_url, the
// first profile's that has one.
func (c *converter) profileAttributes(prof otlp.Profile, where string) error {
	lab, _, _, err := c.attributes(prof.AttributeIndices(), fixed(where))
	if err != nil {
		return err
	}
	p := c.b.P
	type numbered struct {
		n    int
		text string
	}
	var comments []numbered
	for _, k := range slices.Sorted(maps.Keys(lab)) {
		if n, ok := strings.CutPrefix(k, "pprof.profile.comment."); ok {
			if i, err := strconv.Atoi(n); err == nil {
				for _, text := range lab[k] {
					comments = append(comments, numbered{i, text})
				}
			}
		}
	}
	slices.SortStableFunc(comments, func(a, b numbered) int { return cmp.Compare(a.n, b.n) })
	for _, cm := range comments {
		if cm.text != "" && !slices.Contains(p.Comments, cm.text) {
			p.Comments = append(p.Comments, cm.text)
		}
	}
	for key, to := range map[string]*string{
		"pprof.profile.drop_frames": &p.DropFrames,
		"pprof.profile.keep_frames": &p.KeepFrames,
		"pprof.profile.doc_url":     &p.DocURL,
	} {
		if v := lab[key]; *to == "" && len(v) > 0 {
			*to = v[0]
		}
	}
	return nil
}

// valueType returns a profile's sample or period type.
func (c *converter) valueType(vt otlp.ValueType, where string) (*pprofile.ValueType, error) {
	var v pprofile.ValueType
	if err := c.strs(fixed(where), strRef{vt.TypeStrindex(), "type", &v.Type}, strRef{vt.UnitStrindex(), "unit", &v.Unit}); err != nil {
		return nil, err
	}
	return &v, nil
}

// attributes returns attribute_table entries as pprof labels (see the
// package doc).
func (c *converter) attributes(idx pcommon.Int32Slice, where place) (lab map[string][]string, num map[string][]int64, unit map[string][]string, err error) {
	table := c.dict.AttributeTable()
	for _, ai := range idx.All() {
		if ai < 0 || int(ai) >= table.Len() {
			return nil, nil, nil, outOfRange(where()+" attribute index", ai, "attribute_table", table.Len())
		}
		a := table.At(int(ai))
		var key, u string
		if err := c.strs(func() string { return fmt.Sprintf("attribute_table[%d]", ai) }, strRef{a.KeyStrindex(), "key", &key}, strRef{a.UnitStrindex(), "unit", &u}); err != nil {
			return nil, nil, nil, err
		}
		if key == "" {
			continue
		}
		if key == "thread.name" {
			key = labels.Thread
		}
		if v := a.Value(); v.Type() == pcommon.ValueTypeInt {
			if num == nil {
				num, unit = map[string][]int64{}, map[string][]string{}
			}
			num[key] = append(num[key], v.Int())
			unit[key] = append(unit[key], u)
		} else if s, ok := labelString(v); ok {
			if lab == nil {
				lab = map[string][]string{}
			}
			lab[key] = append(lab[key], s)
		}
	}
	return lab, num, unit, nil
}

// labelString writes an attribute value as a label value: strings,
// booleans and doubles; arrays, maps and bytes are not labels.
func labelString(v pcommon.Value) (string, bool) {
	switch v.Type() {
	case pcommon.ValueTypeStr, pcommon.ValueTypeBool, pcommon.ValueTypeDouble, pcommon.ValueTypeInt:
		return v.AsString(), true
	}
	return "", false
}

// resourceNote is a resource's attributes as one comment line, keys
// sorted: "resource: host.name=h service.name=api".
func resourceNote(attrs pcommon.Map) string {
	var kv []string
	for k, v := range attrs.All() {
		if s, ok := labelString(v); ok && k != "" {
			kv = append(kv, k+"="+s)
		}
	}
	if len(kv) == 0 {
		return ""
	}
	slices.Sort(kv)
	return "resource: " + strings.Join(kv, " ")
}

// strRef is a string_table index to look up, the field that holds it, and
// where its string goes.
type strRef struct {
	i     int32
	field string
	to    *string
}

// strs looks up string_table entries; where and each field name an index
// out of the table.
func (c *converter) strs(where place, refs ...strRef) error {
	table := c.dict.StringTable()
	for _, r := range refs {
		switch {
		case r.i >= 0 && int(r.i) < table.Len():
			*r.to = table.At(int(r.i))
		case r.i == 0:
			*r.to = "" // an empty string table: every index 0 is ""
		default:
			return outOfRange(where()+" "+r.field, r.i, "string_table", table.Len())
		}
	}
	return nil
}

func outOfRange(what string, i int32, table string, n int) error {
	return fmt.Errorf("%w: %s %d is out of %s (%d entries)", ErrShape, what, i, table, n)
}

// warn adds a warning once.
func (c *converter) warn(w string) {
	if !slices.Contains(c.warnings, w) {
		c.warnings = append(c.warnings, w)
	}
}
