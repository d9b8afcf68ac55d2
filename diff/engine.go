package diff

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/symbolize"
)

// By chooses which frame a sample's value is attributed to in the method
// table.
type By string

const (
	ByFrame   By = "frame"   // the sample's leaf (first non-skip frame)
	ByDecider By = "decider" // the frame that decided the sample's bucket
	// ByCaller charges a sample to the program's own code behind its
	// bucket: from the deciding frame towards the root, the first frame no
	// rule matches that is not in the Go standard library (the function
	// that called Lock, not the runtime's semaphore); failing that the
	// first rule-free frame, failing that the decider.
	ByCaller By = "caller"
)

// ParseBy validates a --by value.
func ParseBy(s string) (By, error) {
	switch By(s) {
	case ByFrame, ByDecider, ByCaller:
		return By(s), nil
	}
	return "", fmt.Errorf("unknown --by %q (want frame, decider or caller)", s)
}

// Options configure an Analyzer. The zero value means: the profile's default
// sample type, self values by leaf frame, the built-in rules, 20 rows.
type Options struct {
	SampleIndex string         // sample type name (e.g. "cpu", "delay") or index; "" = the profile's default
	Kind        profile.Kind   // overrides kind detection when non-empty
	Cum         bool           // inclusive instead of self shares
	By          By             // ByFrame (default) or ByDecider
	Top         int            // method rows kept (0 = 20, <0 = all)
	Focus       *regexp.Regexp // keep only samples with a frame matching
	Ignore      *regexp.Regexp // drop samples with a frame matching
	Rules       *RuleSet       // nil = DefaultRules()
	// Modules says whether method rows are named module!method: ModulesAuto
	// (the zero value) does so when a .nettrace profile is added, PerfView's
	// convention for .NET methods.
	Modules ModuleNames
}

// ModuleNames is Options.Modules.
type ModuleNames int

const (
	ModulesAuto ModuleNames = iota
	ModulesOn
	ModulesOff
)

// qualify names a row module!method when module names are on.
func (a *Analyzer) qualify(name, module string) string {
	if module == "" || a.opts.Modules == ModulesOff || a.opts.Modules == ModulesAuto && !a.sawNettrace {
		return name
	}
	return module + "!" + name
}

// DefaultTop is the number of method rows kept when Options.Top is 0.
const DefaultTop = 20

// Side names the two sides of a comparison.
type Side int

const (
	Base Side = 0
	New  Side = 1
)

func (s Side) String() string {
	if s == Base {
		return "base"
	}
	return "new"
}

// method is one interned method (normalized frame name) with its per-side
// values and the bucket mix of those values.
type method struct {
	name    string // display name: the first raw name seen, module prefix removed
	key     string // symbolize.Normalize(name)
	fr      frameRule
	frDone  bool
	filter  int8 // 0 unknown, else a FilterClass
	val     [2]float64
	buckets [2][NumBuckets]float64
	module  [2]string // first module seen on each side
	seen    uint64    // stamp for inclusive (cum) counting
	std     int8      // 0 unknown, 1 Go standard library, 2 not (for ByCaller)
}

type sideAcc struct {
	sources    []string
	kind       profile.Kind
	kinds      map[profile.Kind]bool
	total      float64
	samples    int64
	records    int64
	buckets    [NumBuckets]float64
	period     int64
	periodType string
	periods    map[int64]bool
	duration   int64
	dropped    int64
	filtered   int64
	sched      float64         // runnable time (profile.SchedLatency), in no bucket
	threads    map[string]bool // values of the "thread" sample label (thread-time profiles)
}

// Analyzer accumulates profiles into two sides and computes a Result. Add
// streams each profile into compact per-method totals, so the profile can be
// released right after; memory is bounded by the number of distinct methods,
// not samples.
type Analyzer struct {
	opts        Options
	rules       *RuleSet
	sampleType  string // "type/unit", fixed by the first profile
	typeSource  string
	typeFolded  bool // the first profile was folded stacks
	sawNettrace bool // a .nettrace profile was added (ModulesAuto)
	unit        string
	methods     []*method
	byName      map[string]int32 // raw frame name → method
	byKey       map[string]int32 // normalized name → method
	sides       [2]sideAcc
	warnings    []string
	stamp       uint64
	// scratch buffers reused across samples
	stack  []int32
	frames []frameRule
}

// NewAnalyzer returns an Analyzer with the given options.
func NewAnalyzer(opts Options) *Analyzer {
	if opts.By == "" {
		opts.By = ByFrame
	}
	if opts.Top == 0 {
		opts.Top = DefaultTop
	}
	rules := opts.Rules
	if rules == nil {
		rules = DefaultRules()
	}
	a := &Analyzer{opts: opts, rules: rules, byName: map[string]int32{}, byKey: map[string]int32{}}
	for i := range a.sides {
		a.sides[i].kinds = map[profile.Kind]bool{}
		a.sides[i].periods = map[int64]bool{}
	}
	return a
}

// SampleTypeIndex returns the index of the sample type named by sel in p:
// a type name ("cpu", "delay", "samples"), "type/unit", or a decimal index;
// "" selects pprof's default (DefaultSampleType, else the last type).
func SampleTypeIndex(p *pprofile.Profile, sel string) (int, error) {
	if len(p.SampleType) == 0 {
		return 0, fmt.Errorf("profile has no sample types")
	}
	if sel == "" {
		if p.DefaultSampleType != "" {
			for i, st := range p.SampleType {
				if st.Type == p.DefaultSampleType {
					return i, nil
				}
			}
		}
		return len(p.SampleType) - 1, nil
	}
	for i, st := range p.SampleType {
		if st.Type == sel || st.Type+"/"+st.Unit == sel {
			return i, nil
		}
	}
	if n, err := strconv.Atoi(sel); err == nil && n >= 0 && n < len(p.SampleType) {
		return n, nil
	}
	return 0, fmt.Errorf("no sample type %q (it has %s)", sel, SampleTypes(p))
}

// SampleTypes lists a profile's sample types as "type/unit, type/unit".
func SampleTypes(p *pprofile.Profile) string {
	s := make([]string, len(p.SampleType))
	for i, st := range p.SampleType {
		s[i] = st.Type + "/" + st.Unit
	}
	return strings.Join(s, ", ")
}

// Add streams one loaded profile into a side. It fails when the profile's
// selected sample type differs from the profiles added before, unless one of
// them is folded stacks, which say nothing about what they count (a warning
// then says so).
func (a *Analyzer) Add(side Side, l *profile.Loaded) error {
	p := l.Profile
	idx, err := SampleTypeIndex(p, a.opts.SampleIndex)
	if err != nil {
		return fmt.Errorf("%s: %v", l.Source, err)
	}
	st := p.SampleType[idx].Type + "/" + p.SampleType[idx].Unit
	if a.sampleType == "" {
		a.sampleType, a.typeSource, a.unit, a.typeFolded = st, l.Source, p.SampleType[idx].Unit, l.Format == profile.FormatFolded
	} else if st != a.sampleType && (a.typeFolded || l.Format == profile.FormatFolded) {
		// Folded stacks do not say what they count (stackcollapse-perf.pl
		// sums perf's periods, other collapsers count samples), and shares
		// are compared, not values: a folded side compares with any type.
		a.warnings = append(a.warnings, fmt.Sprintf("comparing %s (%s) with %s (%s): folded stacks do not say what they count; shares are compared", a.typeSource, a.sampleType, l.Source, st))
	} else if st != a.sampleType {
		return fmt.Errorf("sample types differ: %s has %s, %s has %s (pick a shared one with --sample-index; %s has %s)",
			a.typeSource, a.sampleType, l.Source, st, l.Source, SampleTypes(p))
	}
	if l.Format == profile.FormatNettrace {
		a.sawNettrace = true
	}
	kind := l.Kind
	if a.opts.Kind != "" {
		kind = a.opts.Kind
	}
	if kind == "" {
		kind = profile.DetectKind(p)
	}
	s := &a.sides[side]
	s.sources = append(s.sources, l.Source)
	s.kinds[kind] = true
	if s.kind == "" {
		s.kind = kind
	}
	s.dropped += l.Dropped
	if p.Period != 0 {
		s.periods[p.Period] = true
		s.period = p.Period
		if p.PeriodType != nil {
			s.periodType = p.PeriodType.Type + "/" + p.PeriodType.Unit
		}
	}
	s.duration += p.DurationNanos

	// The count column (samples/count, contentions/count, goroutine/count)
	// gives the number of samples behind each record.
	countIdx := -1
	for i, t := range p.SampleType {
		if t.Unit == "count" {
			countIdx = i
			break
		}
	}

	// Resolve each location's frames to method ids once, and their frame
	// rules once the location first shows up in a kept sample.
	lr := a.newLocResolver(p, side)
	filtering := a.opts.Focus != nil || a.opts.Ignore != nil
	cum := a.opts.Cum
	stack, frames := a.stack, a.frames
	for _, smp := range p.Sample {
		v := float64(smp.Value[idx])
		if v == 0 {
			continue
		}
		if len(smp.Label) > 0 {
			if th := smp.Label[profile.LabelThread]; len(th) == 1 {
				if s.threads == nil {
					s.threads = map[string]bool{}
				}
				s.threads[th[0]] = true
			}
		}
		lb, lsched, lok := SampleBucket(smp, kind)
		stack, frames = stack[:0], frames[:0]
		if filtering {
			for _, loc := range smp.Location {
				stack = lr.appendIDs(stack, lr.entry(loc))
			}
			if !a.keep(stack) {
				s.filtered++
				continue
			}
			for _, loc := range smp.Location {
				frames = lr.appendRules(frames, lr.entry(loc), kind)
			}
		} else {
			dense := lr.dense
			for _, loc := range smp.Location {
				// Fast path: a known one-frame location, with no calls so
				// the loads of successive frames overlap.
				if id := loc.ID; id < uint64(len(dense)) {
					if e := &dense[id]; e.n == 1 && e.frDone {
						stack = append(stack, e.id)
						frames = append(frames, e.fr)
						continue
					}
				}
				e := lr.entry(loc)
				stack = lr.appendIDs(stack, e)
				frames = lr.appendRules(frames, e, kind)
			}
		}
		if lsched {
			// Scheduler latency (a trace's runnable time, a goroutine
			// not yet started) is reported on its own (Result.Sched),
			// outside the buckets and the method table.
			s.sched += v
			continue
		}
		var b Bucket
		var at int
		if lok {
			b, at = lb, labelDecider(frames)
		} else {
			b, at = classify(frames, kind)
		}

		s.total += v
		s.records++
		if countIdx >= 0 {
			s.samples += smp.Value[countIdx]
		} else {
			s.samples++
		}
		s.buckets[b] += v
		if len(stack) == 0 {
			continue
		}
		if cum {
			a.stamp++
			for _, id := range stack {
				m := a.methods[id]
				if m.seen == a.stamp {
					continue
				}
				m.seen = a.stamp
				a.credit(m, side, b, v)
			}
			continue
		}
		target := at
		switch a.opts.By {
		case ByFrame:
			target = leafIndex(frames)
		case ByCaller:
			target = a.callerIndex(stack, frames, at)
		}
		if target < 0 {
			target = 0
		}
		a.credit(a.methods[stack[target]], side, b, v)
	}
	a.stack, a.frames = stack, frames
	return nil
}

func (a *Analyzer) credit(m *method, side Side, b Bucket, v float64) {
	m.val[side] += v
	m.buckets[side][b] += v
}

// callerIndex implements ByCaller (see there).
func (a *Analyzer) callerIndex(stack []int32, frames []frameRule, at int) int {
	if at < 0 {
		return at
	}
	free := -1
	for i := at; i < len(stack); i++ {
		if frames[i].rule != nil {
			continue
		}
		if free < 0 {
			free = i
		}
		m := a.methods[stack[i]]
		if m.std == 0 {
			m.std = 2
			if symbolize.IsGoStd(m.key) {
				m.std = 1
			}
		}
		if m.std == 2 {
			return i
		}
	}
	if free >= 0 {
		return free
	}
	return at
}

// leafIndex is the first frame that is not a skip frame (the frame a sample's
// own time is spent in), or 0.
func leafIndex(frames []frameRule) int {
	for i, f := range frames {
		if f.rule == nil || f.rule.Strength != Skip {
			return i
		}
	}
	return 0
}

// locResolver maps the locations of one profile to method ids and frame
// rules, memoized per location: a location with one frame (the common case)
// keeps it in its entry, others in two flat arenas, idv[e.off:e.off+e.n]
// and frv[e.off:e.off+e.n]. Locations are indexed by ID in a slice when IDs
// are dense (as every pprof writer makes them), else by a map. Functions are
// memoized the same way, so a name is split and interned once per profile.
type locResolver struct {
	a       *Analyzer
	side    Side
	dense   []locEntry
	byPtr   map[*pprofile.Location]*locEntry
	idv     []int32
	frv     []frameRule
	fnDense []fnEntry // by Function.ID
	fnMap   map[*pprofile.Function]int32
	buf     []symbolize.Frame
}

type fnEntry struct {
	fn *pprofile.Function
	id int32
}

type locEntry struct {
	n      uint32 // frames; 0: not resolved yet (a location has ≥ 1 frame)
	off    uint32 // in idv and frv when n > 1
	id     int32  // the frame when n == 1
	frDone bool   // fr or frv filled in
	fr     frameRule
}

func (a *Analyzer) newLocResolver(p *pprofile.Profile, side Side) *locResolver {
	r := &locResolver{a: a, side: side}
	maxID := uint64(0)
	for _, l := range p.Location {
		maxID = max(maxID, l.ID)
	}
	if maxID <= uint64(4*len(p.Location)+16) {
		r.dense = make([]locEntry, maxID+1)
	} else {
		r.byPtr = make(map[*pprofile.Location]*locEntry, len(p.Location))
	}
	maxID = 0
	for _, f := range p.Function {
		maxID = max(maxID, f.ID)
	}
	if maxID <= uint64(4*len(p.Function)+16) {
		r.fnDense = make([]fnEntry, maxID+1)
	} else {
		r.fnMap = make(map[*pprofile.Function]int32, len(p.Function))
	}
	return r
}

// entry returns loc's memo entry, resolving its method ids on first sight.
func (r *locResolver) entry(loc *pprofile.Location) *locEntry {
	var e *locEntry
	if r.dense != nil && loc.ID < uint64(len(r.dense)) {
		e = &r.dense[loc.ID]
	} else {
		if r.byPtr == nil {
			r.byPtr = map[*pprofile.Location]*locEntry{}
		}
		e = r.byPtr[loc]
		if e == nil {
			e = &locEntry{}
			r.byPtr[loc] = e
		}
	}
	if e.n == 0 {
		r.resolve(e, loc)
	}
	return e
}

// appendIDs appends the method ids of a resolved location's frames.
func (r *locResolver) appendIDs(dst []int32, e *locEntry) []int32 {
	if e.n == 1 {
		return append(dst, e.id)
	}
	return append(dst, r.idv[e.off:e.off+e.n]...)
}

// appendRules appends the frame rules of a resolved location's frames.
func (r *locResolver) appendRules(dst []frameRule, e *locEntry, kind profile.Kind) []frameRule {
	if e.n == 1 {
		if !e.frDone {
			e.fr, e.frDone = r.a.frameRuleOf(e.id, kind), true
		}
		return append(dst, e.fr)
	}
	frs := r.frv[e.off : e.off+e.n]
	if !e.frDone {
		for i, id := range r.idv[e.off : e.off+e.n] {
			frs[i] = r.a.frameRuleOf(id, kind)
		}
		e.frDone = true
	}
	return append(dst, frs...)
}

func (r *locResolver) resolve(e *locEntry, loc *pprofile.Location) {
	a := r.a
	ids := r.idv[len(r.idv):]
	named := 0
	for _, ln := range loc.Line {
		if ln.Function != nil && ln.Function.Name != "" {
			named++
		}
	}
	if n := len(loc.Line); n > 0 && named == n {
		// One frame per named line: memoize on the function, and name the
		// location's frames only when a function is new. Unsymbolized
		// locations take the other path, so each keeps its own address.
		r.buf = r.buf[:0]
		for i, ln := range loc.Line {
			id, ok := r.funcID(ln.Function)
			if !ok {
				if len(r.buf) == 0 {
					r.buf = symbolize.LocationFrames(r.buf, loc)
				}
				id = a.intern(r.buf[i].Name, r.buf[i].Module, r.side)
				r.setFuncID(ln.Function, id)
			}
			ids = append(ids, id)
		}
	} else {
		r.buf = symbolize.LocationFrames(r.buf[:0], loc)
		for _, f := range r.buf {
			ids = append(ids, a.intern(f.Name, f.Module, r.side))
		}
	}
	e.n = uint32(len(ids))
	if e.n == 1 {
		e.id = ids[0]
		return
	}
	e.off = uint32(len(r.idv))
	r.idv = append(r.idv, ids...)
	r.frv = append(r.frv, make([]frameRule, len(r.idv)-len(r.frv))...)
}

// funcID returns the method of a function seen before (fn may be nil).
func (r *locResolver) funcID(fn *pprofile.Function) (int32, bool) {
	if r.fnDense != nil && fn != nil && fn.ID < uint64(len(r.fnDense)) {
		if e := &r.fnDense[fn.ID]; e.fn == fn {
			return e.id, true
		}
	}
	id, ok := r.fnMap[fn]
	return id, ok
}

func (r *locResolver) setFuncID(fn *pprofile.Function, id int32) {
	if r.fnDense != nil && fn != nil && fn.ID < uint64(len(r.fnDense)) {
		if e := &r.fnDense[fn.ID]; e.fn == nil {
			e.fn, e.id = fn, id
			return
		}
	}
	// Not dense, nil, or two functions with one ID (a hand-built profile).
	if r.fnMap == nil {
		r.fnMap = map[*pprofile.Function]int32{}
	}
	r.fnMap[fn] = id
}

// intern returns the method id for a raw frame name, creating the method on
// first sight. Methods are identified by their normalized name, so
// `Foo(int)` and `Foo` from two writers are one method.
func (a *Analyzer) intern(raw, module string, side Side) int32 {
	id, ok := a.byName[raw]
	if !ok {
		key := symbolize.Normalize(raw)
		id, ok = a.byKey[key]
		if !ok {
			id = int32(len(a.methods))
			a.methods = append(a.methods, &method{name: raw, key: key})
			a.byKey[key] = id
		}
		a.byName[raw] = id
	}
	if m := a.methods[id]; module != "" && m.module[side] == "" {
		m.module[side] = module
	}
	return id
}

func (a *Analyzer) frameRuleOf(id int32, kind profile.Kind) frameRule {
	m := a.methods[id]
	if !m.frDone {
		m.fr = a.rules.frameRule(m.key, kind)
		m.frDone = true
	}
	return m.fr
}

// keep applies --focus and --ignore (pprof semantics: focus keeps samples
// with any matching frame, ignore drops samples with any matching frame).
func (a *Analyzer) keep(stack []int32) bool {
	if a.opts.Focus == nil && a.opts.Ignore == nil {
		return true
	}
	focused := a.opts.Focus == nil
	for _, id := range stack {
		m := a.methods[id]
		if m.filter == 0 {
			m.filter = int8(a.opts.FilterClass(m.name))
		}
		switch FilterClass(m.filter) {
		case Ignored:
			return false
		case Focused:
			focused = true
		}
	}
	return focused
}

// FilterClass is what --focus and --ignore say about one frame name.
type FilterClass int8

const (
	Focused FilterClass = 1 // matches focus (and not ignore)
	Ignored FilterClass = 2 // matches ignore: the sample is dropped
	Neutral FilterClass = 4 // matches neither
)

// FilterClass classifies a frame name by the options' Focus and Ignore
// regexps; ignore wins over focus. Callers memoize it per name.
func (o *Options) FilterClass(name string) FilterClass {
	switch {
	case o.Ignore != nil && o.Ignore.MatchString(name):
		return Ignored
	case o.Focus != nil && o.Focus.MatchString(name):
		return Focused
	}
	return Neutral
}

// noiseSE is the standard error of a share p estimated from n samples
// (binomial), the yardstick for "is this delta more than sampling noise".
func noiseSE(p float64, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return math.Sqrt(p * (1 - p) / float64(n))
}

// noisy reports whether a change from pb (nb samples) to pn (nn samples) is
// within two standard errors of sampling noise.
func noisy(pb, pn float64, nb, nn int64) bool {
	se := math.Hypot(noiseSE(pb, nb), noiseSE(pn, nn))
	return math.Abs(pn-pb) < 2*se
}

func share(v, total float64) float64 {
	if total == 0 {
		return 0
	}
	return v / total
}

// bucketOf is the bucket holding most of a method's value over both sides
// (ties go to the earlier bucket in report order).
func (m *method) bucketOf() Bucket {
	best, bv := CPU, -1.0
	for _, b := range Buckets {
		v := m.buckets[0][b] + m.buckets[1][b]
		if v > bv {
			best, bv = b, v
		}
	}
	return best
}

func (a *Analyzer) summary(s Side) SideSummary {
	acc := &a.sides[s]
	return SideSummary{
		Sources:       append([]string{}, acc.sources...),
		Total:         acc.total,
		Unit:          a.unit,
		Samples:       acc.samples,
		Kind:          acc.kind,
		Period:        acc.period,
		PeriodType:    acc.periodType,
		DurationNanos: acc.duration,
	}
}

// LowSamples is the sample count under which a side gets a warning that
// small deltas are within sampling noise.
const LowSamples = 1000

func (a *Analyzer) sideWarnings(s Side, label string) {
	acc := &a.sides[s]
	if len(acc.sources) == 0 {
		return
	}
	if acc.filtered > 0 && acc.total == 0 {
		a.warnings = append(a.warnings, fmt.Sprintf("%s: every sample was removed by --focus/--ignore", label))
	} else if acc.total == 0 {
		a.warnings = append(a.warnings, fmt.Sprintf("%s: side is empty (no sample has a non-zero %s)", label, a.sampleType))
	} else if acc.samples < LowSamples {
		a.warnings = append(a.warnings, fmt.Sprintf("%s: only %d samples; deltas within two standard errors of sampling noise are marked ~", label, acc.samples))
	}
	if len(acc.kinds) > 1 {
		a.warnings = append(a.warnings, fmt.Sprintf("%s: mixes profile kinds %s", label, kindList(acc.kinds)))
	}
	if periodsDiffer(acc.periods) {
		a.warnings = append(a.warnings, fmt.Sprintf("%s: profiles have different sampling periods (%s); merged values weigh them unequally", label, periodList(acc.periods)))
	}
	if acc.kind == profile.KindHeap {
		a.warnings = append(a.warnings, fmt.Sprintf("%s: heap profile: buckets describe where memory was allocated, not where time went", label))
	}
}

// periodsDiffer reports whether a side's sampling periods differ by more
// than 10% (see the cross-side check in Diff).
func periodsDiffer(m map[int64]bool) bool {
	lo, hi := int64(math.MaxInt64), int64(0)
	for p := range m {
		lo, hi = min(lo, p), max(hi, p)
	}
	return len(m) > 1 && float64(hi) > 1.1*float64(lo)
}

func kindList(m map[profile.Kind]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, string(k))
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

func periodList(m map[int64]bool) string {
	var ps []int64
	for p := range m {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.FormatInt(p, 10)
	}
	return strings.Join(s, ", ")
}

// Diff computes the comparison of the base and new sides.
func (a *Analyzer) Diff() *Result {
	base, nw := &a.sides[Base], &a.sides[New]
	r := &Result{SampleType: a.sampleType, Kind: base.kind, By: a.opts.By, Cum: a.opts.Cum, Base: a.summary(Base), New: a.summary(New)}
	if r.Kind == "" {
		r.Kind = nw.kind
	}
	a.sideWarnings(Base, "base")
	a.sideWarnings(New, "new")
	if base.kind != "" && nw.kind != "" && base.kind != nw.kind {
		a.warnings = append(a.warnings, fmt.Sprintf("profile kinds differ: base is %s, new is %s", base.kind, nw.kind))
	}
	// fgprof and other wall-clock writers report a measured period that
	// wobbles by a few percent between runs; only a real difference in
	// sampling rate is worth a warning.
	if base.period != 0 && nw.period != 0 && float64(max(base.period, nw.period)) > 1.1*float64(min(base.period, nw.period)) {
		a.warnings = append(a.warnings, fmt.Sprintf("sampling periods differ: base %d, new %d (%s); shares compare, raw values do not", base.period, nw.period, base.periodType))
	}
	if db, dn := base.duration, nw.duration; db > 0 && dn > 0 {
		if ratio := float64(max(db, dn)) / float64(min(db, dn)); ratio > 1.25 {
			a.warnings = append(a.warnings, fmt.Sprintf("profile durations differ: base %.3gs, new %.3gs; shares compare, raw values do not", float64(db)/1e9, float64(dn)/1e9))
		}
	}
	if tb, tn := len(base.threads), len(nw.threads); tb > 0 && tn > 0 && tb != tn {
		a.warnings = append(a.warnings, fmt.Sprintf("thread counts differ: base %d threads, new %d; thread time is the sum over threads, so a side with more (often idle) threads gives each state a different share", tb, tn))
	}
	for _, b := range Buckets {
		pb, pn := share(base.buckets[b], base.total), share(nw.buckets[b], nw.total)
		r.Buckets = append(r.Buckets, BucketRow{Bucket: b, Base: pb, New: pn, Delta: pn - pb, Noisy: pb != pn && noisy(pb, pn, base.samples, nw.samples)})
	}
	if base.sched > 0 || nw.sched > 0 {
		pb, pn := share(base.sched, base.total+base.sched), share(nw.sched, nw.total+nw.sched)
		r.Sched = &SchedRow{Base: pb, New: pn, Delta: pn - pb, BaseValue: base.sched, NewValue: nw.sched}
	}
	rows := make([]MethodRow, 0, len(a.methods))
	for _, m := range a.methods {
		if m.val[0] == 0 && m.val[1] == 0 {
			continue
		}
		pb, pn := share(m.val[0], base.total), share(m.val[1], nw.total)
		row := MethodRow{
			Name: m.name, Bucket: m.bucketOf(), Base: pb, New: pn, Delta: pn - pb,
			BaseValue: m.val[0], NewValue: m.val[1],
			Noisy: noisy(pb, pn, base.samples, nw.samples),
		}
		row.Module = m.module[New]
		if m.val[1] == 0 {
			row.Module = m.module[Base]
		}
		row.Note = ratioNote(pb, pn)
		rows = append(rows, row)
	}
	annotateMoves(rows)
	for i := range rows {
		rows[i].Name = a.qualify(rows[i].Name, rows[i].Module)
	}
	sortRows(rows)
	if a.opts.Top > 0 && len(rows) > a.opts.Top {
		rows = rows[:a.opts.Top]
	}
	r.Methods = rows
	r.Warnings = append(r.Warnings, a.warnings...)
	return r
}

// sortRows orders method rows by |delta| descending, then by name, so output
// never depends on map or input order.
func sortRows(rows []MethodRow) {
	sort.Slice(rows, func(i, j int) bool {
		di, dj := math.Abs(rows[i].Delta), math.Abs(rows[j].Delta)
		if di != dj {
			return di > dj
		}
		return rows[i].Name < rows[j].Name
	})
}

// Top computes the single-side analysis of everything added to the base side.
func (a *Analyzer) Top() *TopResult {
	s := &a.sides[Base]
	t := &TopResult{SampleType: a.sampleType, Kind: s.kind, By: a.opts.By, Cum: a.opts.Cum,
		Sources: append([]string{}, s.sources...), Total: s.total, Unit: a.unit, Samples: s.samples}
	a.sideWarnings(Base, "profile")
	for _, b := range Buckets {
		t.Buckets = append(t.Buckets, TopBucket{Bucket: b, Share: share(s.buckets[b], s.total), Value: s.buckets[b]})
	}
	if s.sched > 0 {
		t.Sched = &TopSched{Share: share(s.sched, s.total+s.sched), Value: s.sched}
	}
	for _, m := range a.methods {
		if m.val[0] == 0 {
			continue
		}
		t.Methods = append(t.Methods, TopMethod{Name: a.qualify(m.name, m.module[Base]), Bucket: m.bucketOf(), Share: share(m.val[0], s.total), Value: m.val[0], Module: m.module[Base]})
	}
	sort.Slice(t.Methods, func(i, j int) bool {
		if t.Methods[i].Value != t.Methods[j].Value {
			return t.Methods[i].Value > t.Methods[j].Value
		}
		return t.Methods[i].Name < t.Methods[j].Name
	})
	if a.opts.Top > 0 && len(t.Methods) > a.opts.Top {
		t.Methods = t.Methods[:a.opts.Top]
	}
	t.Warnings = append(t.Warnings, a.warnings...)
	return t
}
