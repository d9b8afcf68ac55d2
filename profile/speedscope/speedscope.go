// Package speedscope reads speedscope JSON files
// (https://www.speedscope.app/file-format-schema.json) into one pprof profile.
//
// A speedscope file holds a shared frame table and one or more profiles,
// usually one per thread (dotnet-trace, py-spy, rbspy). Each profile is either
// "sampled" (root-first stacks of frame indexes with a weight each) or
// "evented" (open/close events of frames at points in time). All profiles of
// a file are merged into one pprof profile; each sample carries its profile's
// name as the label "thread", and identical stacks of one thread are merged.
//
// # Units and sample types
//
// Time units (nanoseconds, microseconds, milliseconds, seconds) become the
// sample type wall/nanoseconds, with PeriodType wall/nanoseconds and
// DefaultSampleType "wall"; files with sampled profiles also get a
// samples/count type (the number of samples behind each record; 0 for stacks
// that come from evented profiles). Speedscope files say nothing about what
// their time measures, and "wall" is the closest reading for the writers that
// matter here:
//
//   - dotnet-trace (TraceEvent's SpeedScopeStackSourceWriter) writes evented
//     profiles in milliseconds from its thread-time stacks: every managed
//     thread is sampled whether it runs or blocks, and the leaf pseudo-frames
//     CPU_TIME, UNMANAGED_CODE_TIME (and BLOCKED_TIME in PerfView) say which.
//     That is wall-clock time per thread.
//   - py-spy writes sampled profiles in seconds (weight 1/rate per sample).
//     Without --idle it only samples threads that are running, so its time
//     is closer to CPU time, yet the file is indistinguishable; it is read as
//     wall too, and the frame rules decide what the stacks mean.
//
// profile.DetectKind reports wall for the wall/nanoseconds period type.
//
// The unit "none" becomes samples/count (weights are counts; evented
// durations are in abstract units) and "bytes" becomes space/bytes. Time
// units may differ between the profiles of one file (each is converted to
// nanoseconds); time, count and byte units may not be mixed.
//
// # Frames
//
// A frame name written as Module!Function (TraceEvent) becomes the function
// Function with the mapping Module, as the folded-stacks reader does; a
// frame's file becomes the function's file name and its line and column the
// location's line. A negative line or column (V8 writes -1 for none) is no
// position, and a 64-bit {"low", "high", "unsigned"} object (a protobufjs
// Long kept by speedscope's pprof importer) is read as its number: speedscope
// exports such files and reads them back. Pseudo-frames such as "Thread (1234)", "Process64 app
// (42)", CPU_TIME and UNMANAGED_CODE_TIME are kept as ordinary frames.
//
// # Robustness
//
// Parse never panics on bad input: wrong JSON types, missing fields, frame
// indexes out of range, negative or non-finite weights, mismatched samples
// and weights, badly nested or unsorted events all fail with an error that
// says where (`profiles[2].samples[17]: frame index 9041 out of range (1200
// frames)`). Weights are summed in the file's order and a total that does
// not fit an int64 fails at the weight or event that passes it. Memory
// stays proportional to the input; stacks deeper than MaxDepth and
// profiles that need more frame references than 4 per byte of input (at
// most MaxFrameRefs) after merging are refused. Samples along one call
// path share the array behind their Location slices: treat them as
// read-only (pprof's own decoder shares one array for all samples).
package speedscope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/labels"
	"github.com/profdiff/profdiff/profile/internal/loaderr"
)

const (
	// MaxDepth is the deepest stack Parse accepts.
	MaxDepth = 1 << 16
	// MaxFrameRefs bounds the frame references of the resulting
	// profile: the lengths of the distinct arrays behind its samples'
	// Location slices (a caller's stack is its callee's without the leaf,
	// so the samples along one path share one array). Smaller inputs get
	// a smaller bound, 4 references per byte.
	MaxFrameRefs = 1 << 26
)

// Looks reports whether data (already gunzipped, UTF-8) is a speedscope file:
// a JSON object whose "$schema" names speedscope, or which has both
// "shared": {"frames": [...]} and "profiles": [...]. It does not validate the
// rest, so a truncated file whose "$schema" comes first still looks like one
// (and Parse then says it is truncated). Chrome trace events, .cpuprofile and
// other JSON formats do not.
func Looks(data []byte) bool {
	data = trimStart(data)
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	sharedFrames, profiles := false, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key, _ := tok.(string)
		switch key {
		case "$schema":
			var s jstr
			if dec.Decode(&s) != nil {
				return false
			}
			if s.kind == kindString && strings.Contains(strings.ToLower(s.v), "speedscope") {
				return true
			}
		case "shared":
			var v hasFrames
			if dec.Decode(&v) != nil {
				return false
			}
			sharedFrames = bool(v)
		case "profiles":
			var v firstByte
			if dec.Decode(&v) != nil {
				return false
			}
			profiles = v.b == '['
		default:
			var v skipValue
			if dec.Decode(&v) != nil {
				return false
			}
		}
		if sharedFrames && profiles {
			return true
		}
	}
	return false
}

// trimStart drops a UTF-8 byte order mark and leading white space.
func trimStart(data []byte) []byte {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	return bytes.TrimLeft(data, " \t\r\n")
}

// firstByte records the first byte of a JSON value without decoding it.
type firstByte struct{ b byte }

func (f *firstByte) UnmarshalJSON(b []byte) error {
	if len(b) > 0 {
		f.b = b[0]
	}
	return nil
}

// hasFrames records whether a JSON value is an object with a "frames" array.
type hasFrames bool

func (h *hasFrames) UnmarshalJSON(b []byte) error {
	var sh struct {
		Frames firstByte `json:"frames"`
	}
	*h = hasFrames(jsonKind(b) == kindObject && json.Unmarshal(b, &sh) == nil && sh.Frames.b == '[')
	return nil
}

// skipValue consumes a JSON value without keeping it.
type skipValue struct{}

func (skipValue) UnmarshalJSON([]byte) error { return nil }

// JSON value kinds, as named in error messages.
const (
	kindAbsent = ""
	kindNumber = "a number"
	kindString = "a string"
	kindArray  = "an array"
	kindObject = "an object"
	kindBool   = "a boolean"
	kindNull   = "null"
)

func jsonKind(b []byte) string {
	i := skipSpace(b, 0)
	if i >= len(b) {
		return kindAbsent
	}
	switch b[i] {
	case '"':
		return kindString
	case '[':
		return kindArray
	case '{':
		return kindObject
	case 't', 'f':
		return kindBool
	case 'n':
		return kindNull
	}
	return kindNumber
}

// jstr is a JSON value expected to be a string; it records what it got
// rather than failing, so that errors can say where.
type jstr struct {
	v    string
	kind string
}

func (s *jstr) UnmarshalJSON(b []byte) error {
	s.kind = jsonKind(b)
	if s.kind == kindString {
		if len(b) >= 2 && b[len(b)-1] == '"' && bytes.IndexByte(b[1:len(b)-1], '\\') < 0 && bytes.IndexByte(b[1:len(b)-1], '"') < 0 && utf8.Valid(b) {
			s.v = string(b[1 : len(b)-1])
			return nil
		}
		if err := json.Unmarshal(b, &s.v); err != nil {
			return err
		}
	}
	return nil
}

// jnum is a JSON value expected to be a number (or, where allowed, a
// numeric string: TraceEvent writes startValue and endValue as strings).
type jnum struct {
	v    float64
	kind string
	raw  string // the number or string as written, for messages
	err  bool   // a number that does not fit a float64, or a non-numeric string
}

func (n *jnum) UnmarshalJSON(b []byte) error {
	n.kind = jsonKind(b)
	switch n.kind {
	case kindNumber:
		n.raw = string(b)
		f, err := strconv.ParseFloat(n.raw, 64)
		n.v, n.err = f, err != nil || math.IsInf(f, 0) || math.IsNaN(f)
	case kindString:
		if err := json.Unmarshal(b, &n.raw); err != nil {
			return err
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(n.raw), 64)
		n.v, n.err = f, err != nil || math.IsInf(f, 0) || math.IsNaN(f)
	}
	return nil
}

type fileJSON struct {
	Schema   jstr          `json:"$schema"`
	Shared   *sharedJSON   `json:"shared"`
	Profiles []profileJSON `json:"profiles"`
}

type sharedJSON struct {
	Frames []frameJSON `json:"frames"`
}

type frameFields struct {
	Name jstr `json:"name"`
	File jstr `json:"file"`
	Line jpos `json:"line"`
	Col  jpos `json:"col"`
}

// jpos is a frame's line or column: a number, or the object
// {"low": …, "high": …, "unsigned": …} that a 64-bit integer decoded by
// protobufjs (the Long class) turns into when speedscope's pprof importer
// keeps it and its exporter writes it out.
type jpos struct{ jnum }

func (p *jpos) UnmarshalJSON(b []byte) error {
	if jsonKind(b) != kindObject {
		return p.jnum.UnmarshalJSON(b)
	}
	var l struct {
		Low, High *int32
		Unsigned  bool
	}
	p.kind, p.raw = kindObject, string(b)
	if json.Unmarshal(b, &l) != nil || l.Low == nil || l.High == nil {
		return nil // reported as an object where a number belongs
	}
	v := int64(*l.High)<<32 | int64(uint32(*l.Low))
	p.kind, p.v = kindNumber, float64(v)
	if l.Unsigned {
		p.v = float64(uint64(v))
	}
	return nil
}

type frameJSON struct {
	frameFields
	kind string // kind of the JSON value when it is not an object
}

func (f *frameJSON) UnmarshalJSON(b []byte) error {
	if k := jsonKind(b); k != kindObject {
		f.kind = k
		return nil
	}
	return json.Unmarshal(b, &f.frameFields)
}

type profileFields struct {
	Type       jstr            `json:"type"`
	Name       jstr            `json:"name"`
	Unit       jstr            `json:"unit"`
	StartValue jnum            `json:"startValue"`
	EndValue   jnum            `json:"endValue"`
	Samples    json.RawMessage `json:"samples"`
	Weights    json.RawMessage `json:"weights"`
	Events     json.RawMessage `json:"events"`
}

type profileJSON struct {
	profileFields
	kind string
}

func (p *profileJSON) UnmarshalJSON(b []byte) error {
	if k := jsonKind(b); k != kindObject {
		p.kind = k
		return nil
	}
	return json.Unmarshal(b, &p.profileFields)
}

// unit classes: what a profile's weights measure.
const (
	classTime  = "time"
	classCount = "count"
	classBytes = "bytes"
)

// units maps each speedscope unit to its class and its factor to
// nanoseconds (time) or to the pprof unit (count, bytes).
var units = map[string]struct {
	class string
	mult  float64
}{
	"none":         {classCount, 1},
	"nanoseconds":  {classTime, 1},
	"microseconds": {classTime, 1e3},
	"milliseconds": {classTime, 1e6},
	"seconds":      {classTime, 1e9},
	"bytes":        {classBytes, 1},
}

const unitList = `"none", "nanoseconds", "microseconds", "milliseconds", "seconds" or "bytes"`

// Parse converts a speedscope file (already gunzipped, UTF-8) into one pprof
// profile that passes CheckValid. Warnings describe what was accepted but
// adjusted (rounded weights, skipped empty stacks). Errors say what is wrong
// and where, as a JSON path into the file.
func Parse(data []byte) (p *pprofile.Profile, warnings []string, err error) {
	defer func() {
		// Nothing below should panic; if it does, bad input must still
		// not crash the program.
		if r := recover(); r != nil {
			p, warnings, err = nil, nil, fmt.Errorf("corrupt speedscope file (parser failed: %v)", r)
		}
	}()
	data = trimStart(data)
	if len(data) == 0 {
		return nil, nil, loaderr.Mark(loaderr.Empty, errors.New("empty file"))
	}
	if data[0] != '{' {
		if data[0] == '[' {
			return nil, nil, errors.New("not a speedscope file: the top level is a JSON array, not an object (Chrome trace events?)")
		}
		return nil, nil, errors.New("not a speedscope file: not a JSON object")
	}
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, describeJSONError(err, data)
	}
	b := newBuilder()
	b.inputSize = len(data)
	if err := b.frames(&f); err != nil {
		return nil, nil, err
	}
	if f.Profiles == nil {
		return nil, nil, errors.New(`not a speedscope file: missing "profiles"`)
	}
	if len(f.Profiles) == 0 {
		return nil, nil, loaderr.Mark(loaderr.Empty, errors.New(`no profiles: "profiles" is empty`))
	}
	for i := range f.Profiles {
		if err := b.profile(i, &f.Profiles[i]); err != nil {
			return nil, nil, err
		}
	}
	b.warnEmptyStacks()
	p, err = b.build()
	if err != nil {
		return nil, nil, err
	}
	if err := p.CheckValid(); err != nil {
		return nil, nil, fmt.Errorf("internal error: built an invalid profile: %v", err)
	}
	return p, b.warnings, nil
}

// describeJSONError turns encoding/json errors into messages with a place.
func describeJSONError(err error, data []byte) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		msg := se.Error()
		if se.Offset >= int64(len(data)) || strings.Contains(msg, "unexpected end") {
			msg += " (the file is truncated)"
		}
		return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, msg)
	case errors.As(err, &te):
		where := te.Field
		if where == "" {
			where = "top level"
		}
		want := "a different type"
		switch te.Type.Kind().String() {
		case "slice", "array":
			want = kindArray
		case "struct", "ptr", "map":
			want = kindObject
		case "string":
			want = kindString
		}
		return fmt.Errorf("%s: expected %s, got %s", where, want, te.Value)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// position returns the 1-based line and column of a byte offset.
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	head := data[:off]
	line = bytes.Count(head, []byte{'\n'}) + 1
	col = int(off) - bytes.LastIndexByte(head, '\n')
	return line, col
}

// node is one call-tree node: a stack (its frames are the path from the
// thread's root) and what was measured on it.
type node struct {
	parent int32 // -1 for a thread root
	loc    int32 // index into builder.locs; -1 for a thread root
	depth  int32
	thread int32 // index into builder.threads
	weight float64
	count  int64
}

type childKey struct{ parent, loc int32 }

type builder struct {
	*build.Builder[fnKey, locKey]
	locs     []*pprofile.Location // canonical locations as built; prune compacts this array in place, so it is valid until then
	frameLoc []int32              // speedscope frame index -> locs index
	names    []string             // speedscope frame index -> name, for messages
	nodes    []node
	children map[childKey]int32
	threads  []string
	roots    map[string]int32 // thread name -> root node

	class      string // unit class of the first profile
	firstUnit  string
	hasSampled bool
	rounded    bool    // a count or byte weight was not a whole number
	period     float64 // the common weight of all sampled samples, in pprof units; -1 if they differ
	duration   float64 // longest profile, in nanoseconds
	total      float64 // all weights so far, in pprof units
	inputSize  int     // bytes of JSON, for maxRefs
	// emptyIn names the sampled profiles with samples of an empty stack,
	// and emptyStacks counts those samples: one warning says it for all.
	emptyIn     []string
	emptyStacks int
	warnings    []string
}

func newBuilder() *builder {
	bld := build.New[fnKey, locKey](nil)
	return &builder{
		Builder:  bld,
		children: map[childKey]int32{},
		roots:    map[string]int32{},
	}
}

// frames reads shared.frames into canonical functions and locations.
func (b *builder) frames(f *fileJSON) error {
	if f.Shared == nil {
		if f.Profiles == nil {
			return errors.New(`not a speedscope file: no "shared" frame table and no "profiles"`)
		}
		return errors.New(`missing "shared" (the frame table)`)
	}
	if f.Shared.Frames == nil {
		return errors.New(`missing "shared.frames"`)
	}
	frames := f.Shared.Frames
	b.frameLoc = make([]int32, len(frames))
	b.names = make([]string, len(frames))
	for i := range frames {
		fr := &frames[i]
		where := fmt.Sprintf("shared.frames[%d]", i)
		if fr.kind != "" {
			return fmt.Errorf("%s: expected an object, got %s", where, fr.kind)
		}
		switch fr.Name.kind {
		case kindString:
		case kindAbsent, kindNull:
			return fmt.Errorf("%s: missing name", where)
		default:
			return fmt.Errorf("%s.name: expected a string, got %s", where, fr.Name.kind)
		}
		name := strings.TrimSpace(fr.Name.v)
		if name == "" {
			name = "(anonymous)"
		}
		file, err := optionalString(fr.File, where+".file")
		if err != nil {
			return err
		}
		line, err := optionalInt(fr.Line, where+".line")
		if err != nil {
			return err
		}
		col, err := optionalInt(fr.Col, where+".col")
		if err != nil {
			return err
		}
		b.names[i] = name
		b.frameLoc[i] = int32(b.location(name, file, line, col).ID - 1)
	}
	b.locs = b.P.Location
	return nil
}

// fnKey and locKey say when two speedscope frames are one function (same
// name and file) and one location (same function, line and column).
type fnKey struct{ frame, file string }
type locKey struct {
	fn        *pprofile.Function
	line, col int64
}

// location interns the function and location of one frame. A
// `Module!Function` name keeps its module as the mapping.
func (b *builder) location(name, file string, line, col int64) *pprofile.Location {
	module, fname := build.SplitModule(name)
	fn := b.Function(fnKey{name, file}, pprofile.Function{Name: fname, SystemName: fname, Filename: file})
	var m *pprofile.Mapping
	if module != "" {
		m = b.Mapping(module)
	}
	k := locKey{fn, line, col}
	if l, ok := b.Location(k); ok {
		return l
	}
	return b.AddLocationAs(k, &pprofile.Location{
		Mapping: m,
		Line:    []pprofile.Line{{Function: fn, Line: line, Column: col}},
	})
}

// optionalInt reads an optional line or column. A negative one means none:
// V8's heap profiles, and so speedscope's exports of them, write -1 for a
// frame without a position (speedscope only displays the field).
func optionalInt(n jpos, where string) (int64, error) {
	switch n.kind {
	case kindAbsent, kindNull:
		return 0, nil
	case kindNumber:
	default:
		return 0, fmt.Errorf("%s: expected a number, got %s", where, n.kind)
	}
	if n.err || n.v != math.Trunc(n.v) || n.v > math.MaxInt32 {
		return 0, fmt.Errorf("%s: %s is not a valid line or column number", where, truncate(n.raw, 40))
	}
	return max(int64(n.v), 0), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// root returns the root node of a thread.
func (b *builder) root(thread string) int32 {
	if r, ok := b.roots[thread]; ok {
		return r
	}
	b.threads = append(b.threads, thread)
	r := int32(len(b.nodes))
	b.nodes = append(b.nodes, node{parent: -1, loc: -1, thread: int32(len(b.threads) - 1)})
	b.roots[thread] = r
	return r
}

// child returns the node for frame (a speedscope frame index) called from
// parent.
func (b *builder) child(parent int32, frame int) int32 {
	k := childKey{parent, b.frameLoc[frame]}
	if c, ok := b.children[k]; ok {
		return c
	}
	c := int32(len(b.nodes))
	pn := b.nodes[parent]
	b.nodes = append(b.nodes, node{parent: parent, loc: k.loc, depth: pn.depth + 1, thread: pn.thread})
	b.children[k] = c
	return c
}

// profile adds one entry of "profiles".
func (b *builder) profile(i int, pj *profileJSON) error {
	where := fmt.Sprintf("profiles[%d]", i)
	if pj.kind != "" {
		return fmt.Errorf("%s: expected an object, got %s", where, pj.kind)
	}
	typ, err := requiredString(pj.Type, where+".type", `"sampled" or "evented"`)
	if err != nil {
		return err
	}
	unitName, err := requiredString(pj.Unit, where+".unit", unitList)
	if err != nil {
		return err
	}
	u, ok := units[unitName]
	if !ok {
		return fmt.Errorf("%s.unit: unknown unit %q (want %s)", where, truncate(unitName, 40), unitList)
	}
	if b.class == "" {
		b.class, b.firstUnit = u.class, unitName
	} else if u.class != b.class {
		return fmt.Errorf("%s.unit: %q does not go with profiles[0]'s %q: a file that mixes time, byte and count units cannot be merged", where, unitName, b.firstUnit)
	}
	thread, err := optionalString(pj.Name, where+".name")
	if err != nil {
		return err
	}
	if thread = strings.TrimSpace(thread); thread == "" {
		thread = where
	}
	start, err := optionalNumber(pj.StartValue, where+".startValue")
	if err != nil {
		return err
	}
	end, err := optionalNumber(pj.EndValue, where+".endValue")
	if err != nil {
		return err
	}
	if d := (end - start) * u.mult; u.class == classTime && pj.StartValue.kind != kindAbsent && pj.EndValue.kind != kindAbsent && d > 0 && d < math.MaxInt64/2 {
		b.duration = math.Max(b.duration, d)
	}
	switch typ {
	case "sampled":
		b.hasSampled = true
		return b.sampled(where, thread, pj, u.class, u.mult)
	case "evented":
		return b.evented(where, thread, pj, u.class, u.mult)
	}
	return fmt.Errorf("%s.type: unknown profile type %q (want \"sampled\" or \"evented\")", where, truncate(typ, 40))
}

func requiredString(s jstr, where, want string) (string, error) {
	switch s.kind {
	case kindString:
		return s.v, nil
	case kindAbsent, kindNull:
		return "", fmt.Errorf("%s: missing (want %s)", where, want)
	}
	return "", fmt.Errorf("%s: expected a string, got %s", where, s.kind)
}

// optionalString is s's value, "" where it is absent or null.
func optionalString(s jstr, where string) (string, error) {
	switch s.kind {
	case kindString:
		return s.v, nil
	case kindAbsent, kindNull:
		return "", nil
	}
	return "", fmt.Errorf("%s: expected a string, got %s", where, s.kind)
}

func optionalNumber(n jnum, where string) (float64, error) {
	switch n.kind {
	case kindAbsent, kindNull:
		return 0, nil
	case kindNumber, kindString:
		if n.err {
			return 0, fmt.Errorf("%s: %q is not a finite number", where, truncate(n.raw, 40))
		}
		return n.v, nil
	}
	return 0, fmt.Errorf("%s: expected a number, got %s", where, n.kind)
}

// sampled adds a sampled profile: samples[i] is a root-first list of frame
// indexes, weights[i] its weight.
func (b *builder) sampled(where, thread string, pj *profileJSON, class string, mult float64) error {
	if k := jsonKind(pj.Samples); k != kindArray {
		if k == kindAbsent || k == kindNull {
			return fmt.Errorf("%s: sampled profile has no \"samples\"", where)
		}
		return fmt.Errorf("%s.samples: expected an array, got %s", where, k)
	}
	if k := jsonKind(pj.Weights); k != kindArray {
		if k == kindAbsent || k == kindNull {
			return fmt.Errorf("%s: sampled profile has no \"weights\"", where)
		}
		return fmt.Errorf("%s.weights: expected an array, got %s", where, k)
	}
	weights, err := sampleWeights(where, pj.Weights)
	if err != nil {
		return err
	}
	nSamples := 0
	if err := eachItem(pj.Samples, '[', func(int, []byte, []byte) error { nSamples++; return nil }); err != nil {
		return err
	}
	if nSamples != len(weights) {
		return fmt.Errorf("%s: %d samples but %d weights (there must be one weight per sample)", where, nSamples, len(weights))
	}
	root := b.root(thread)
	empty := 0
	// path holds the nodes of the previous sample's stack, root first:
	// a sample that starts as the one before it does (the usual case in
	// a file written in time order) walks them without a lookup.
	var path []int32
	err = eachItem(pj.Samples, '[', func(j int, _, elem []byte) error {
		if k := jsonKind(elem); k != kindArray {
			return fmt.Errorf("%s.samples[%d]: expected an array of frame indexes, got %s", where, j, k)
		}
		n := root
		depth := 0
		same := true // the stack so far is the start of path
		err := eachItem(elem, '[', func(k int, _, idx []byte) error {
			fi, err := b.frameIndex(idx)
			if err != nil {
				return fmt.Errorf("%s.samples[%d][%d]: %v", where, j, k, err)
			}
			if depth++; depth > MaxDepth {
				return fmt.Errorf("%s.samples[%d]: stack deeper than %d frames", where, j, MaxDepth)
			}
			if same && depth <= len(path) && b.nodes[path[depth-1]].loc == b.frameLoc[fi] {
				n = path[depth-1]
				return nil
			}
			same = false
			n = b.child(n, fi)
			path = append(path[:depth-1], n)
			return nil
		})
		if err != nil {
			return err
		}
		if n == root {
			empty++
			return nil
		}
		w := weights[j] * mult
		if err := b.addWeight(w, class, where, "weights", j); err != nil {
			return err
		}
		b.nodes[n].weight += w
		b.nodes[n].count++
		switch {
		case b.period == 0:
			b.period = w
		case b.period != w:
			b.period = -1
		}
		return nil
	})
	if err != nil {
		return err
	}
	if empty > 0 {
		b.emptyIn = append(b.emptyIn, where)
		b.emptyStacks += empty
	}
	return nil
}

// warnEmptyStacks adds one warning for the samples of an empty stack in all
// profiles (a file of one profile per thread would otherwise say it per
// thread).
func (b *builder) warnEmptyStacks() {
	switch n := len(b.emptyIn); {
	case n == 1:
		b.warnings = append(b.warnings, fmt.Sprintf("%s: skipped %d sample(s) with an empty stack", b.emptyIn[0], b.emptyStacks))
	case n > 1:
		first := b.emptyIn[:min(n, 3)]
		more := ""
		if n > len(first) {
			more = ", …"
		}
		b.warnings = append(b.warnings, fmt.Sprintf("skipped %d sample(s) with an empty stack in %d profiles (%s%s)", b.emptyStacks, n, strings.Join(first, ", "), more))
	}
}

// maxTotal bounds the sum of all weights, in pprof units: a total under it
// stays an exact enough int64 after rounding per stack, and a consumer
// summing the samples' values cannot overflow.
const maxTotal = math.MaxInt64 / 2

// addWeight adds w (in pprof units) to the total of all weights, failing
// with the place of the weight (where.list[j]) that makes it overflow, and
// notes weights that counts and bytes cannot hold exactly.
func (b *builder) addWeight(w float64, class, where, list string, j int) error {
	if b.total += w; b.total >= maxTotal {
		return fmt.Errorf("%s.%s[%d]: weights add up to more than a 64-bit integer holds (%.4g %s)", where, list, j, b.total, unitOf(class))
	}
	if class != classTime && w != math.Trunc(w) {
		b.rounded = true
	}
	return nil
}

// unitOf names the pprof unit of a unit class.
func unitOf(class string) string {
	switch class {
	case classTime:
		return "nanoseconds"
	case classBytes:
		return "bytes"
	}
	return "samples"
}

// sampleWeights reads a sampled profile's "weights", which must be
// non-negative numbers.
func sampleWeights(where string, raw []byte) ([]float64, error) {
	var weights []float64
	err := eachItem(raw, '[', func(j int, _, elem []byte) error {
		w, err := number(elem)
		if err != nil {
			return fmt.Errorf("%s.weights[%d]: %v", where, j, err)
		}
		if w < 0 {
			return fmt.Errorf("%s.weights[%d]: negative weight %s", where, j, truncate(string(elem), 40))
		}
		weights = append(weights, w)
		return nil
	})
	return weights, err
}

// frameIndex reads one frame index of a sample or event.
func (b *builder) frameIndex(elem []byte) (int, error) {
	if len(elem) > 0 && len(elem) <= 9 {
		// The usual index, a few digits, read without ParseFloat (the
		// same value: JSON has validated it, so it has no leading zero).
		v := 0
		for _, c := range elem {
			if c < '0' || c > '9' {
				v = -1
				break
			}
			v = v*10 + int(c-'0')
		}
		if v >= 0 && v < len(b.frameLoc) {
			return v, nil
		}
	}
	k := jsonKind(elem)
	if k != kindNumber {
		return 0, fmt.Errorf("frame index: expected a number, got %s", k)
	}
	v, err := number(elem)
	return b.frameIndexValue(v, string(elem), err != nil)
}

// frameIndexValue checks a frame index v, written as raw; bad is set when
// raw did not parse as a finite number.
func (b *builder) frameIndexValue(v float64, raw string, bad bool) (int, error) {
	if bad || v != math.Trunc(v) {
		return 0, fmt.Errorf("frame index %s is not an integer", truncate(raw, 40))
	}
	if v < 0 || v >= float64(len(b.frameLoc)) {
		return 0, fmt.Errorf("frame index %s out of range (%d frames)", truncate(raw, 40), len(b.frameLoc))
	}
	return int(v), nil
}

// number parses one JSON number.
func number(elem []byte) (float64, error) {
	if k := jsonKind(elem); k != kindNumber {
		return 0, fmt.Errorf("expected a number, got %s", k)
	}
	v, err := strconv.ParseFloat(string(elem), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%s is not a finite number", truncate(string(elem), 40))
	}
	return v, nil
}

// evented adds an evented profile: "O" opens a frame on top of the stack,
// "C" closes the innermost open frame; the time between two events is
// charged to the stack open in between (its innermost frame's self time).
func (b *builder) evented(where, thread string, pj *profileJSON, class string, mult float64) error {
	switch k := jsonKind(pj.Events); k {
	case kindArray:
	case kindAbsent, kindNull:
		return fmt.Errorf("%s: evented profile has no \"events\"", where)
	default:
		return fmt.Errorf("%s.events: expected an array, got %s", where, k)
	}
	root := b.root(thread)
	var stack []int // open speedscope frame indexes
	cur := root
	prevAt := math.Inf(-1)
	err := eachItem(pj.Events, '[', func(j int, _, elem []byte) error {
		ew := func() string { return fmt.Sprintf("%s.events[%d]", where, j) }
		ev, err := b.event(elem, ew)
		if err != nil {
			return err
		}
		fi, at, atB := ev.frame, ev.at, ev.atRaw
		if at < prevAt {
			return fmt.Errorf("%s: at %s is before the previous event's %v (events must be sorted by time)", ew(), truncate(string(atB), 40), prevAt)
		}
		if len(stack) > 0 && at > prevAt {
			w := (at - prevAt) * mult
			if math.IsInf(w, 0) {
				return fmt.Errorf("%s: time span too large", ew())
			}
			if err := b.addWeight(w, class, where, "events", j); err != nil {
				return err
			}
			b.nodes[cur].weight += w
		}
		prevAt = at
		if ev.open {
			if len(stack) >= MaxDepth {
				return fmt.Errorf("%s: stack deeper than %d frames", ew(), MaxDepth)
			}
			stack = append(stack, fi)
			cur = b.child(cur, fi)
			return nil
		}
		if len(stack) == 0 {
			return fmt.Errorf("%s: close of frame %d (%q), which is not open (no frame is open)", ew(), fi, truncate(b.names[fi], 80))
		}
		if top := stack[len(stack)-1]; top != fi {
			return fmt.Errorf("%s: close of frame %d (%q), which is not the innermost open frame %d (%q): events are not properly nested", ew(), fi, truncate(b.names[fi], 80), top, truncate(b.names[top], 80))
		}
		stack = stack[:len(stack)-1]
		cur = b.nodes[cur].parent
		return nil
	})
	if err != nil {
		return err
	}
	if len(stack) > 0 {
		top := stack[len(stack)-1]
		return fmt.Errorf("%s: %d frame(s) still open after the last event (innermost: frame %d %q): the trace is incomplete", where, len(stack), top, truncate(b.names[top], 80))
	}
	return nil
}

// event is one decoded event of an evented profile.
type event struct {
	open  bool    // "O"; else "C"
	frame int     // speedscope frame index
	at    float64 // time, in the profile's unit
	atRaw []byte  // at as written, for messages
}

// event decodes one element of an evented profile's "events"; ew names it
// in messages.
func (b *builder) event(elem []byte, ew func() string) (event, error) {
	if k := jsonKind(elem); k != kindObject {
		return event{}, fmt.Errorf("%s: expected an object, got %s", ew(), k)
	}
	var typB, frameB, atB []byte
	err := eachItem(elem, '{', func(_ int, key, val []byte) error {
		switch string(key) {
		case "type":
			typB = val
		case "frame":
			frameB = val
		case "at":
			atB = val
		}
		return nil
	})
	if err != nil {
		return event{}, fmt.Errorf("%s: %v", ew(), err)
	}
	var typ jstr
	if err := typ.UnmarshalJSON(typB); err != nil {
		return event{}, fmt.Errorf("%s.type: %v", ew(), err)
	}
	if typ.kind != kindString || typ.v != "O" && typ.v != "C" {
		if _, err := requiredString(typ, ew()+".type", `"O" or "C"`); err != nil {
			return event{}, err
		}
		return event{}, fmt.Errorf("%s.type: %q is not \"O\" (open) or \"C\" (close)", ew(), truncate(typ.v, 40))
	}
	var fi int
	switch k := jsonKind(frameB); k {
	case kindNumber:
		if fi, err = b.frameIndex(frameB); err != nil {
			return event{}, fmt.Errorf("%s: %v", ew(), err)
		}
	case kindAbsent, kindNull:
		return event{}, fmt.Errorf("%s: missing frame", ew())
	default:
		return event{}, fmt.Errorf("%s.frame: expected a number, got %s", ew(), k)
	}
	var at float64
	switch k := jsonKind(atB); k {
	case kindNumber:
		if at, err = number(atB); err != nil {
			return event{}, fmt.Errorf("%s.at: %v", ew(), err)
		}
	case kindAbsent, kindNull:
		return event{}, fmt.Errorf("%s: missing at", ew())
	default:
		return event{}, fmt.Errorf("%s.at: expected a number, got %s", ew(), k)
	}
	return event{open: typ.v == "O", frame: fi, at: at, atRaw: atB}, nil
}

// build turns the call tree into pprof samples.
func (b *builder) build() (*pprofile.Profile, error) {
	p := b.P
	var valueType *pprofile.ValueType
	switch b.class {
	case classTime:
		valueType = &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"}
		p.PeriodType = &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"}
		p.DefaultSampleType = "wall"
		p.DurationNanos = int64(b.duration)
	case classBytes:
		valueType = &pprofile.ValueType{Type: "space", Unit: "bytes"}
		p.PeriodType = &pprofile.ValueType{Type: "space", Unit: "bytes"}
	default:
		valueType = &pprofile.ValueType{Type: "samples", Unit: "count"}
		p.PeriodType = &pprofile.ValueType{Type: "samples", Unit: "count"}
	}
	withCount := b.class == classTime && b.hasSampled
	if withCount {
		p.SampleType = []*pprofile.ValueType{{Type: "samples", Unit: "count"}, valueType}
	} else {
		p.SampleType = []*pprofile.ValueType{valueType}
	}
	p.Period = 1
	if b.class == classTime && b.period > 0 {
		if r := math.Round(b.period); r >= 1 && r < math.MaxInt64/2 {
			p.Period = int64(r)
		}
	}
	keep := func(n *node) bool { return n.loc >= 0 && (math.Round(n.weight) != 0 || withCount && n.count != 0) }
	stacks, used, err := b.stacks(keep)
	if err != nil {
		return nil, err
	}
	var total float64
	for i := range b.nodes {
		n := &b.nodes[i]
		if !keep(n) {
			continue
		}
		v := math.Round(n.weight)
		if total += v; total >= maxTotal { // rounding up per stack can add to what addWeight checked
			return nil, errors.New("weights too large: their total overflows a 64-bit integer")
		}
		s := &pprofile.Sample{
			Location: stacks[i],
			Label:    map[string][]string{labels.Thread: {b.threads[n.thread]}},
		}
		if withCount {
			s.Value = []int64{n.count, int64(v)}
		} else {
			s.Value = []int64{int64(v)}
		}
		p.Sample = append(p.Sample, s)
	}
	if len(p.Sample) == 0 {
		return nil, loaderr.Mark(loaderr.Empty, errors.New("no samples: every profile is empty or has zero weights"))
	}
	b.prune(used)
	if b.rounded {
		b.warnings = append(b.warnings, fmt.Sprintf("weights in unit %q are not whole numbers; rounded per stack", b.firstUnit))
	}
	return p, nil
}

// stacks returns the leaf-first stack of every node that keep selects
// (nil for the others) and which locations they use. A parent's stack is
// its child's without the leaf, so a path of nodes shares one array: deep
// evented stacks where every level has self time cost their depth, not
// its square. An error says when the arrays would exceed the bound on
// frame references (see maxRefs).
func (b *builder) stacks(keep func(*node) bool) ([][]*pprofile.Location, []bool, error) {
	stacks := make([][]*pprofile.Location, len(b.nodes))
	used := make([]bool, len(b.locs))
	limit, refs := b.maxRefs(), 0
	// Children come after their parents: from the end, every node's
	// descendants are done before it.
	for i := len(b.nodes) - 1; i >= 0; i-- {
		n := &b.nodes[i]
		if n.loc < 0 || stacks[i] == nil && !keep(n) {
			continue
		}
		if stacks[i] == nil {
			if refs += int(n.depth); refs > limit {
				return nil, nil, fmt.Errorf("profile too large: its stacks need more than %d frame references after merging identical stacks (the bound is 4 per byte of input, at most %d)", limit, MaxFrameRefs)
			}
			locs := make([]*pprofile.Location, 0, n.depth)
			for c := int32(i); b.nodes[c].loc >= 0; c = b.nodes[c].parent {
				locs = append(locs, b.locs[b.nodes[c].loc])
				used[b.nodes[c].loc] = true
			}
			stacks[i] = locs
		}
		if p := n.parent; p >= 0 && b.nodes[p].loc >= 0 && stacks[p] == nil {
			stacks[p] = stacks[i][1:]
		}
	}
	for i := range stacks {
		if !keep(&b.nodes[i]) {
			stacks[i] = nil // a path through a node without a sample
		}
	}
	return stacks, used, nil
}

// maxRefs bounds the frame references of the profile: 4 per byte of input,
// at least 1<<20 and at most MaxFrameRefs, so that memory stays linear in
// the input. A sampled stack takes at least 2 bytes per frame; an evented
// leaf at depth d takes two events (about 60 bytes) for d references, so
// the bound refuses only leaves below depth 240 or so by the thousand.
func (b *builder) maxRefs() int {
	return min(max(4*b.inputSize, 1<<20), MaxFrameRefs)
}

// prune keeps the locations that samples use, and their functions and
// mappings, numbering them anew.
func (b *builder) prune(used []bool) {
	p := b.P
	p.Location = p.Location[:0]
	fns := map[*pprofile.Function]bool{}
	maps := map[*pprofile.Mapping]bool{}
	for i, l := range b.locs {
		if !used[i] {
			continue
		}
		l.ID = uint64(len(p.Location) + 1)
		p.Location = append(p.Location, l)
		fns[l.Line[0].Function] = true
		if l.Mapping != nil {
			maps[l.Mapping] = true
		}
	}
	p.Function = keep(p.Function, fns, func(f *pprofile.Function, id uint64) { f.ID = id })
	p.Mapping = keep(p.Mapping, maps, func(m *pprofile.Mapping, id uint64) { m.ID = id })
}

// keep keeps the entries of list that are in used, in order, numbering
// them 1, 2, ... with setID.
func keep[T any](list []*T, used map[*T]bool, setID func(*T, uint64)) []*T {
	kept := list[:0]
	for _, e := range list {
		if used[e] {
			setID(e, uint64(len(kept)+1))
			kept = append(kept, e)
		}
	}
	return kept
}

// eachItem calls fn with each item of the JSON array or object raw (open
// is '[' or '{'), which encoding/json has already validated: n items read
// before it and, of an object, the raw key (escapes not decoded) and the
// value; of an array, a nil key and the element.
func eachItem(raw []byte, open byte, fn func(n int, key, val []byte) error) error {
	closing, what := byte(']'), "array"
	if open == '{' {
		closing, what = '}', "object"
	}
	s := raw
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != open {
		return fmt.Errorf("expected an %s, got %s", what, jsonKind(raw))
	}
	i++
	for n := 0; ; n++ {
		var done bool
		var err error
		if i, done, err = nextItem(s, i, n, closing, what); done || err != nil {
			return err
		}
		var key []byte
		if open == '{' {
			if i >= len(s) || s[i] != '"' {
				return fmt.Errorf("malformed object key at byte %d", i)
			}
			kend, err := stringEnd(s, i)
			if err != nil {
				return err
			}
			key = s[i+1 : kend-1]
			i = skipSpace(s, kend)
			if i >= len(s) || s[i] != ':' {
				return fmt.Errorf("malformed object at byte %d", i)
			}
			i = skipSpace(s, i+1)
		}
		end, err := valueEnd(s, i)
		if err != nil {
			return err
		}
		if err := fn(n, key, s[i:end]); err != nil {
			return err
		}
		i = end
	}
}

// nextItem moves i (after the opening bracket or the previous item of a
// JSON array or object; n items read so far) to the start of the next item.
// done is set at the closing bracket.
func nextItem(s []byte, i, n int, closing byte, what string) (next int, done bool, err error) {
	i = skipSpace(s, i)
	if i >= len(s) {
		return i, false, fmt.Errorf("unterminated %s", what)
	}
	if s[i] == closing {
		return i, true, nil
	}
	if n > 0 {
		if s[i] != ',' {
			return i, false, fmt.Errorf("malformed %s at byte %d", what, i)
		}
		i = skipSpace(s, i+1)
	}
	return i, false, nil
}

func skipSpace(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the offset just past the JSON value starting at s[i].
func valueEnd(s []byte, i int) (int, error) {
	if i >= len(s) {
		return 0, errors.New("unexpected end of array")
	}
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '[', '{':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				e, err := stringEnd(s, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '[', '{':
				depth++
			case ']', '}':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("unterminated array or object")
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != ']' && s[j] != '}' && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' && s[j] != '\r' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("malformed value at byte %d", i)
	}
	return j, nil
}

func stringEnd(s []byte, i int) (int, error) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("unterminated string")
}
