// Package firefox reads the Gecko profile format: what Firefox's built-in
// profiler writes before the Firefox Profiler processes it
// (MOZ_PROFILER_STARTUP=1 MOZ_PROFILER_SHUTDOWN=FILE), and the
// export of Firefox DevTools' former performance panel (Firefox 59 in the
// corpus), which wraps the same profile in {"profile": …}; and the
// Firefox Profiler's processed format, what profiler.firefox.com saves
// (processed.go).
//
// # What a file holds
//
// "meta" (the format's "version", the sampling "interval" in
// milliseconds, the "categories"), "threads" and "processes": each
// process a profile of the same shape (a JSON string in older versions),
// read recursively. A thread has "samples", "stackTable" and "frameTable"
// as {"schema": {column: index}, "data": [[…], …]}, and a "stringTable".
// A sample names its stack; a stack its frame and its prefix (the
// caller's stack, an earlier row); a frame its location, a string:
// "name (url:line:column)" for JavaScript, a C++ label such as
// "nsRefreshDriver::Tick", or an address ("0x7f…") of native code the
// profiler did not symbolicate.
//
// # Values
//
// Every registered thread is sampled each interval whatever it does
// (a sleeping thread's sample repeats its last stack), so the profile is
// thread time (kind wall): a sample weighs the interval
// (wall/nanoseconds), with samples/count beside it. A "weight" column
// multiplies both; weightType "tracing-ms" makes it the time itself in
// milliseconds; "bytes" (allocation profiles) is refused. Each sample carries its thread as the label "thread":
// the thread's name and its process type ("GeckoMain (tab)"). The
// duration is meta's profilingEndTime − profilingStartTime where the
// file has them, else the longest span of a thread's samples plus one
// interval.
//
// # Frames
//
// Location strings are read as the Firefox Profiler's own processing
// reads them (see parseLocation), so that a profile names its frames as
// profiler.firefox.com does. A JavaScript frame ("name (url:line:column)",
// "[source]" after it in newer versions) is its function's name, with the
// script's URL as its file and the line; one without a name (a script's
// top level) is named "(root scope) URL". An address is named after the
// library of "libs" it falls in ("[libxul.so]", with the library as its
// mapping), so that addresses, which differ from run to run, compare by
// library; "[native]" when none holds it. Any other string is a label
// (C++ code, "nsRefreshDriver::Tick"). The root frame "(root)" is
// dropped.
//
// # Categories
//
// Firefox puts each frame in a category ("Idle", "GC / CC", "Network",
// "JavaScript", "Layout", …; in the 2018 format a bit mask); a frame
// without one has its caller's. A sample's category is its leaf frame's,
// and where it says why the thread was not running JavaScript or layout,
// the sample carries it as the fallback bucket (labels.Fallback; the
// frame rules still decide first): Idle is wait, GC / CC gc, Network io.
package firefox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/jsonerr"
	"github.com/profdiff/profdiff/profile/internal/jsonsniff"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// ErrShape is wrapped by errors about a profile's structure.
var ErrShape = errors.New("malformed Gecko profile")

// Looks reports whether data is a Gecko profile, raw or processed: a JSON
// object with "meta", "threads", "stackTable" and "frameTable".
func Looks(data []byte) bool {
	return jsonsniff.ObjectWith(data, `"meta"`, `"threads"`, `"stackTable"`, `"frameTable"`)
}

type table struct {
	Schema map[string]int      `json:"schema"`
	Data   [][]json.RawMessage `json:"data"`
}

// col returns the index of a column, or -1.
func (t *table) col(name string) int {
	if i, ok := t.Schema[name]; ok && i >= 0 {
		return i
	}
	return -1
}

type thread struct {
	Name        string          `json:"name"`
	ProcessType string          `json:"processType"`
	Samples     json.RawMessage `json:"samples"`
	StackTable  table           `json:"stackTable"`
	FrameTable  table           `json:"frameTable"`
	StringTable []string        `json:"stringTable"`
}

type lib struct {
	Start uint64 `json:"start"`
	End   uint64 `json:"end"`
	Name  string `json:"name"`
}

type meta struct {
	Version                    float64                 `json:"version"`
	Interval                   float64                 `json:"interval"`
	PreprocessedProfileVersion *float64                `json:"preprocessedProfileVersion"`
	Categories                 []struct{ Name string } `json:"categories"`
	ProfilingStartTime         *float64                `json:"profilingStartTime"`
	ProfilingEndTime           *float64                `json:"profilingEndTime"`
}

type gecko struct {
	Meta      meta              `json:"meta"`
	Libs      []lib             `json:"libs"`
	Threads   []json.RawMessage `json:"threads"`
	Processes []json.RawMessage `json:"processes"`
	Profile   json.RawMessage   `json:"profile"` // the DevTools export's wrapper
}

// maxNesting bounds the nesting of processes.
const maxNesting = 8

// Parse reads a Gecko profile (see the package doc).
func Parse(data []byte) (*pprofile.Profile, []string, error) {
	r := &reader{
		b:       build.New[string, string](nil),
		samples: map[sampleKey]*pprofile.Sample{},
	}
	p := r.b.P
	p.SampleType = []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}}
	p.DefaultSampleType = "wall"
	p.PeriodType = &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"}
	m, err := r.read(data)
	if err != nil {
		return nil, nil, err
	}
	if m.PreprocessedProfileVersion != nil {
		p.Comments = []string{fmt.Sprintf("firefox: Firefox Profiler processed profile (format version %g, of a Gecko profile of version %g), thread time", *m.PreprocessedProfileVersion, m.Version)}
	} else {
		p.Comments = []string{fmt.Sprintf("firefox: Gecko profile (format version %g), thread time", m.Version)}
	}
	p.Period = max(int64(math.Round(m.Interval*1e6)), 1)
	if s, e := m.ProfilingStartTime, m.ProfilingEndTime; s != nil && e != nil && *e > *s && *e-*s < maxTime {
		p.DurationNanos = int64(math.Round((*e - *s) * 1e6))
	} else {
		p.DurationNanos = int64(math.Round(r.span * 1e6))
	}
	var warns []string
	if r.noStack > 0 {
		warns = append(warns, fmt.Sprintf("%d samples without a stack left out", r.noStack))
	}
	return p, warns, nil
}

// read reads a Gecko profile or a processed one into r, and returns its
// meta. A file that names preprocessedProfileVersion is read as
// processed first, and as a Gecko profile where its meta has none.
func (r *reader) read(data []byte) (*meta, error) {
	if bytes.Contains(data, []byte(`"preprocessedProfileVersion"`)) {
		pp, err := r.processed(data)
		if err != nil {
			return nil, err
		}
		if pp != nil {
			return &pp.Meta.meta, nil
		}
	}
	var g gecko
	if err := unmarshal(data, &g); err != nil {
		return nil, err
	}
	if g.Profile != nil && g.Meta.Interval == 0 && len(g.Threads) == 0 {
		g = gecko{}
		if err := unmarshal(data, &struct {
			Profile *gecko `json:"profile"`
		}{&g}); err != nil {
			return nil, err
		}
	}
	if err := r.profile(&g, "", 0); err != nil {
		return nil, err
	}
	return &g.Meta, nil
}

// maxTime bounds times and durations, in milliseconds (about 31 years).
const maxTime = 1e12

func unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return jsonerr.Describe(ErrShape, err)
	}
	return nil
}

// sampleKey is a stack of a thread: the thread's index in the order
// read (threads of every process), the row of its stackTable.
type sampleKey struct{ thread, stack int }

type reader struct {
	b       *build.Builder[string, string]
	samples map[sampleKey]*pprofile.Sample
	nthread int     // threads read so far
	span    float64 // ms: the longest span of one thread's samples, plus an interval
	noStack int
}

// profile reads one profile (the top one or a process's), where says
// which in errors.
func (r *reader) profile(g *gecko, where string, depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("%w: %sprocesses nested deeper than %d", ErrShape, where, maxNesting)
	}
	if !(g.Meta.Interval > 0 && g.Meta.Interval < maxTime) {
		return fmt.Errorf("%w: %smeta.interval %g is out of range", ErrShape, where, g.Meta.Interval)
	}
	if g.Meta.PreprocessedProfileVersion != nil {
		return fmt.Errorf("%w: %sa processed profile (meta.preprocessedProfileVersion) nested in a Gecko profile", ErrShape, where)
	}
	libs := append([]lib(nil), g.Libs...)
	sort.Slice(libs, func(i, j int) bool { return libs[i].Start < libs[j].Start })
	// nil without a list: the 2018 format's bit masks (bucketOf).
	var cats []string
	for _, c := range g.Meta.Categories {
		cats = append(cats, c.Name)
	}
	for i, raw := range g.Threads {
		var t thread
		if err := unmarshalMaybeString(raw, &t); err != nil {
			return fmt.Errorf("%sthreads[%d]: %w", where, i, err)
		}
		if err := r.thread(&t, fmt.Sprintf("%sthreads[%d] (%s)", where, i, t.Name), g.Meta.Interval, libs, cats); err != nil {
			return err
		}
	}
	for i, raw := range g.Processes {
		var sub gecko
		if err := unmarshalMaybeString(raw, &sub); err != nil {
			return fmt.Errorf("%sprocesses[%d]: %w", where, i, err)
		}
		if err := r.profile(&sub, fmt.Sprintf("%sprocesses[%d].", where, i), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// unmarshalMaybeString reads an object, or a JSON string holding one (as
// older versions wrote threads and processes).
func unmarshalMaybeString(raw json.RawMessage, v any) error {
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '"' {
		var s string
		if err := unmarshal(raw, &s); err != nil {
			return err
		}
		raw = []byte(s)
	}
	return unmarshal(raw, v)
}

// samples is a thread's samples table, its weights typed.
type samples struct {
	table
	WeightType string `json:"weightType"`
}

// frame is what a frame's row says, parsed once per frame.
type frame struct {
	loc      *pprofile.Location // nil for the dropped root
	category int                // -1: none, the caller's
}

func (r *reader) thread(t *thread, where string, interval float64, libs []lib, cats []string) error {
	var ss samples
	if len(t.Samples) > 0 {
		if err := unmarshal(t.Samples, &ss); err != nil {
			return fmt.Errorf("%s.samples: %w", where, err)
		}
	}
	// Frames.
	fLoc, fLine, fCat := t.FrameTable.col("location"), t.FrameTable.col("line"), t.FrameTable.col("category")
	if fLoc < 0 {
		return fmt.Errorf("%w: %s.frameTable has no location column", ErrShape, where)
	}
	frames := make([]frame, len(t.FrameTable.Data))
	for i, row := range t.FrameTable.Data {
		s, ok := intAt(row, fLoc)
		if !ok || s < 0 || s >= len(t.StringTable) {
			return fmt.Errorf("%w: %s.frameTable.data[%d]: location is no string of the stringTable (%d strings)", ErrShape, where, i, len(t.StringTable))
		}
		line, _ := intAt(row, fLine)
		cat, ok := intAt(row, fCat)
		if !ok {
			cat = -1
		}
		frames[i] = frame{category: cat}
		if loc := t.StringTable[s]; loc != "(root)" {
			frames[i].loc = r.location(loc, int64(max(line, 0)), libs)
		}
	}
	// Stacks.
	sPrefix, sFrame := t.StackTable.col("prefix"), t.StackTable.col("frame")
	if sFrame < 0 {
		return fmt.Errorf("%w: %s.stackTable has no frame column", ErrShape, where)
	}
	n := len(t.StackTable.Data)
	st := newStacks(n)
	for i, row := range t.StackTable.Data {
		f, ok := intAt(row, sFrame)
		if !ok {
			f = -1
		}
		pre, ok := intAt(row, sPrefix)
		if !ok {
			pre = -1
		} else if pre < 0 {
			return fmt.Errorf("%w: %s.stackTable.data[%d]: prefix %d is not an earlier stack", ErrShape, where, i, pre)
		}
		if err := st.set(i, f, pre, frames); err != nil {
			return fmt.Errorf("%w: %s.stackTable.data[%d]: %v", ErrShape, where, i, err)
		}
	}
	// Samples.
	cStack, cTime, cWeight := ss.col("stack"), ss.col("time"), ss.col("weight")
	if cStack < 0 && len(ss.Data) > 0 {
		return fmt.Errorf("%w: %s.samples has no stack column", ErrShape, where)
	}
	th := r.threadSamples(t.Name, t.ProcessType, st, frames, cats)
	for i, row := range ss.Data {
		where := func() string { return fmt.Sprintf("%s.samples.data[%d]", where, i) }
		if tm, ok := numAt(row, cTime); ok {
			th.time(tm)
		}
		s, ok := intAt(row, cStack)
		if !ok {
			r.noStack++
			continue
		}
		w, hasW := numAt(row, cWeight)
		if err := th.add(s, w, hasW, ss.WeightType, interval); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrShape, where(), err)
		}
	}
	th.done(interval)
	return nil
}

// stacks is a thread's stack table, read: each stack's caller (-1 for a
// root), frame and category (its frame's, else its caller's).
type stacks struct{ prefix, frame, category []int }

func newStacks(n int) *stacks {
	return &stacks{make([]int, n), make([]int, n), make([]int, n)}
}

// set sets stack i: its frame f and its caller pre (-1: none), which must
// be an earlier stack, so that one pass in order gives every stack its
// category.
func (st *stacks) set(i, f, pre int, frames []frame) error {
	if f < 0 || f >= len(frames) {
		return fmt.Errorf("frame is no row of the frameTable (%d frames)", len(frames))
	}
	if pre < -1 || pre >= i {
		return fmt.Errorf("prefix %d is not an earlier stack", pre)
	}
	st.prefix[i], st.frame[i] = pre, f
	st.category[i] = frames[f].category
	if st.category[i] < 0 && pre >= 0 {
		st.category[i] = st.category[pre]
	}
	return nil
}

// threadSamples adds one thread's samples to the profile.
type threadSamples struct {
	r           *reader
	label       string // the thread label
	tid         int    // the thread's index in the order read
	stacks      *stacks
	frames      []frame
	cats        []string
	first, last float64 // ms: the first and last sample time (+Inf and -Inf before one)
}

// threadSamples starts the samples of the next thread read, labelled by
// its name and process type.
func (r *reader) threadSamples(name, processType string, st *stacks, frames []frame, cats []string) *threadSamples {
	if processType != "" {
		name += " (" + processType + ")"
	}
	r.nthread++
	return &threadSamples{r: r, label: name, tid: r.nthread - 1, stacks: st, frames: frames, cats: cats, first: math.Inf(1), last: math.Inf(-1)}
}

// time notes a sample's time, in ms.
func (th *threadSamples) time(tm float64) {
	if math.Abs(tm) >= maxTime {
		return
	}
	th.first, th.last = min(th.first, tm), max(th.last, tm)
}

// done notes the span of the thread's samples in the profile's.
func (th *threadSamples) done(interval float64) {
	if th.last >= th.first {
		th.r.span = max(th.r.span, th.last-th.first+interval)
	}
}

// add adds a sample of stack s, of weight w where hasW (of weightType),
// else of one interval.
func (th *threadSamples) add(s int, w float64, hasW bool, weightType string, interval float64) error {
	n := len(th.stacks.prefix)
	if s < 0 || s >= n {
		return fmt.Errorf("stack %d is no row of the stackTable (%d stacks)", s, n)
	}
	count, value := 1.0, interval
	if hasW {
		if !(w >= 0 && w < maxTime) {
			return fmt.Errorf("weight %g is out of range", w)
		}
		switch weightType {
		case "", "samples":
			count, value = w, w*interval
		case "tracing-ms":
			value = w
		default:
			return fmt.Errorf("weightType %q (want samples or tracing-ms)", weightType)
		}
	}
	r := th.r
	key := sampleKey{th.tid, s}
	smp := r.samples[key]
	if smp == nil {
		smp = r.sample(th.label, s, th.stacks, th.frames, bucketOf(th.stacks.category[s], th.cats))
		r.samples[key] = smp
	}
	c, v := int64(math.Round(count)), int64(math.Round(value*1e6))
	if smp.Value[0] > math.MaxInt64-c || smp.Value[1] > math.MaxInt64-v {
		return errors.New("the total overflows")
	}
	smp.Value[0] += c
	smp.Value[1] += v
	return nil
}

// sample returns a new sample of stack s, added to the profile.
func (r *reader) sample(thread string, s int, st *stacks, frames []frame, bucket string) *pprofile.Sample {
	smp := &pprofile.Sample{Value: []int64{0, 0}, Label: map[string][]string{labels.Thread: {thread}}}
	if bucket != "" {
		smp.Label[labels.Fallback] = []string{bucket}
	}
	for i := s; i >= 0; i = st.prefix[i] {
		if l := frames[st.frame[i]].loc; l != nil {
			smp.Location = append(smp.Location, l)
		}
	}
	if len(smp.Location) == 0 {
		smp.Location = append(smp.Location, r.location("(root)", 0, nil))
	}
	r.b.AddSample(smp)
	return smp
}

// A frame's location string is read as the Firefox Profiler's own
// processing reads it (firefox-devtools/profiler,
// src/profile-logic/process-profile.ts: _extractUnsymbolicatedFunction,
// _extractCppFunction, _extractJsFunction), so that a Gecko profile and
// the processed profile made of it name their frames alike:
//
//   - "0x…": an address the profiler did not symbolicate;
//   - "NAME (in LIBRARY)", maybe followed by " + OFFSET" or " (FILE:LINE)":
//     a symbolicated native function, LIBRARY its module;
//   - "NAME (URL:LINE[:COLUMN])", followed by "[SOURCE]" (an index into
//     the process's sources) in newer versions: JavaScript; without a
//     name, "URL:LINE[:COLUMN][[SOURCE]]", a script's top level, named
//     "(root scope) URL". Of a URL "A -> B" (script B loaded by A) the
//     file is the last, B;
//   - anything else: a label ("nsRefreshDriver::Tick", "CC (Free Snow
//     White)").
var (
	cppFrame = []*regexp.Regexp{
		regexp.MustCompile(`^(.*) \(in ([^)]*)\) \+ [0-9]+$`),
		regexp.MustCompile(`^(.*) \(in ([^)]*)\) \(.*:.*\)$`),
		regexp.MustCompile(`^(.*) \(in ([^)]*)\)$`),
	}
	jsFrame = []*regexp.Regexp{
		regexp.MustCompile(`^(.*) \((.+?):([0-9]+)(?::[0-9]+)?\)(?:\[\d+\])?$`),
		regexp.MustCompile(`^()(.+?):([0-9]+)(?::[0-9]+)?(?:\[\d+\])?$`),
	}
)

// frameName is what a location string names.
type frameName struct {
	name, file, module string
	line               int64 // JavaScript's line in the URL, else 0
	address            bool
}

// parseLocation reads a location string (see above); an address is named
// after the library of libs it falls in ("[libxul.so]", the library as
// its module), "[native]" when none holds it.
func parseLocation(s string, libs []lib) frameName {
	if strings.HasPrefix(s, "0x") {
		f := frameName{name: "[native]", address: true}
		if a, err := strconv.ParseUint(s[2:], 16, 64); err == nil {
			if k := sort.Search(len(libs), func(i int) bool { return libs[i].Start > a }) - 1; k >= 0 && a < libs[k].End && libs[k].Name != "" {
				f.module = libs[k].Name
				f.name = "[" + f.module + "]"
			}
		}
		return f
	}
	for _, re := range cppFrame {
		if m := re.FindStringSubmatch(s); m != nil {
			return frameName{name: strings.TrimPrefix(m[1], "non-virtual thunk to "), module: m[2]}
		}
	}
	for _, re := range jsFrame {
		if m := re.FindStringSubmatch(s); m != nil {
			f := frameName{name: m[1], file: realScript(m[2])}
			f.line, _ = strconv.ParseInt(m[3], 10, 64)
			if f.name == "" {
				f.name = "(root scope) " + f.file
			}
			return f
		}
	}
	return frameName{name: s}
}

// realScript is the script of a URL "A -> B -> C": C.
func realScript(url string) string {
	if i := strings.LastIndex(url, " -> "); i >= 0 {
		return url[i+len(" -> "):]
	}
	return url
}

// location returns the location of a frame's location string; line, where
// not 0, is the line the frame was at (the frame table's line column), else
// JavaScript's line in the string is taken. An address has no line.
func (r *reader) location(s string, line int64, libs []lib) *pprofile.Location {
	f := parseLocation(s, libs)
	switch {
	case f.address:
		line = 0
	case line == 0:
		line = f.line
	}
	return r.frameLocation(f.name, f.file, f.module, line)
}

// frameLocation returns the location of a function (name, file) at a
// line, in module where not "".
func (r *reader) frameLocation(name, file, module string, line int64) *pprofile.Location {
	key := name + "\x00" + file + "\x00" + module + "\x00" + strconv.FormatInt(line, 10)
	if l, ok := r.b.Location(key); ok {
		return l
	}
	fn := r.b.Function(name+"\x00"+file, pprofile.Function{Name: name, SystemName: name, Filename: file})
	l := &pprofile.Location{Line: []pprofile.Line{{Function: fn, Line: line}}}
	if module != "" {
		l.Mapping = r.b.Mapping(module)
	}
	return r.b.AddLocationAs(key, l)
}

// bucketOf is the fallback bucket of a category: by name where the file
// lists its categories, else by the 2018 format's bit mask.
func bucketOf(cat int, names []string) string {
	if cat < 0 {
		return ""
	}
	if names != nil {
		if cat >= len(names) {
			return ""
		}
		switch names[cat] {
		case "Idle":
			return "wait"
		case "GC / CC":
			return "gc"
		case "Network", "IO":
			return "io"
		}
		return ""
	}
	// js::ProfileEntry::Category of Firefox 59: GC 0x80, CC 0x100,
	// NETWORK 0x200.
	switch {
	case cat&(0x80|0x100) != 0:
		return "gc"
	case cat&0x200 != 0:
		return "io"
	}
	return ""
}

// intAt returns row[i] as an int, false when it is absent, null or not
// an integer.
func intAt(row []json.RawMessage, i int) (int, bool) {
	v, ok := numAt(row, i)
	if !ok || v != math.Trunc(v) || math.Abs(v) > math.MaxInt32 {
		return 0, false
	}
	return int(v), true
}

// numAt returns row[i] as a number, false when it is absent, null or not
// a number.
func numAt(row []json.RawMessage, i int) (float64, bool) {
	if i < 0 || i >= len(row) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(bytes.TrimSpace(row[i])), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}
