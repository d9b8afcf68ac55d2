package diff

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
)

// Options configure an Analyzer. The zero value means: the profile's default
// sample type, self values attributed as DefaultBy says for the first
// profile's kind, the built-in rules, 20 rows.
type Options struct {
	SampleIndex string       // sample type name (e.g. "cpu", "delay") or index; "" = the profile's default
	Kind        profile.Kind // overrides kind detection when non-empty
	Cum         bool         // inclusive instead of self shares
	// By is the attribution; "" picks it by kind: ByCaller for wall,
	// goroutine, trace, block and mutex profiles (their leaf is the
	// scheduler), ByFrame otherwise (Analysis.ByDefault then says so).
	By        result.By
	Normalize result.Normalize // the measure rows are sorted and noted by
	// Peek selects frames, by the name each has in its profile (module
	// prefix removed), whose methods' inclusive values, callers and
	// callees Result.Peek lists (see PeekRow).
	Peek   *regexp.Regexp
	Top    int            // method rows kept (0 = 20, <0 = all)
	Focus  *regexp.Regexp // keep only samples with a frame matching
	Ignore *regexp.Regexp // drop samples with a frame matching
	Rules  *rules.Set     // nil = rules.Default()
	// Modules says whether method rows are named module!method: ModulesAuto
	// (the zero value) does so when a .nettrace profile is added, PerfView's
	// convention for .NET methods.
	Modules ModuleNames
	// CallTree builds the merged call tree of both sides (Result.Tree), for
	// flame graphs; off by default, since it holds every distinct path.
	CallTree bool
	// TreeFrames, with CallTree, builds the tree of the frames as the
	// profiles named them (spellings) rather than of methods: two build
	// variants of a function (`f` and `f.part.0`, Rust's `::h<hash>`
	// instances) stay two frames, so that the stacks written from it are
	// the input's. Folded stacks need it; pictures, which compare the
	// sides method by method, do not.
	TreeFrames bool
	// TreeStacks, with CallTree, leaves the tree unbuilt and hands its
	// stacks over as they were collected (Result.Stacks): a writer of
	// every stack (folded) needs no node a frame. TreeMin does not apply.
	TreeStacks bool
	// TreeMin, with CallTree, merges the subtrees narrower than this
	// fraction of each side's total into one "other" node per parent
	// (CallNode.Other), so that a picture of a huge tree stays small; 0
	// keeps every node (folded stacks need them all).
	TreeMin float64
	// Stacks keeps every stack of each side, bucketed and summed, for
	// EachStack (a pprof profile written from them) without building
	// Result.Tree unless CallTree asks for it too. Its frames are those
	// the profiles named (spellings), or methods where CallTree is set
	// without TreeFrames. Like CallTree, it holds every distinct path.
	Stacks bool
	// Spellings fills Sample.Spellings for OnSample consumers that match
	// frame names as the profiles wrote them (the gate's method checks).
	Spellings bool
	// Context, when not nil, stops the work soon after it ends (profdiff
	// ends it on SIGINT and SIGTERM): the walks of profiles look at it
	// once every stop.Every records and stop, and so does the call
	// tree's build at each node. Wait then returns the context's cause,
	// and what Diff and Top return is incomplete: a caller that ended the
	// context reads none of it.
	Context context.Context
	// shards is how finely streamed profiles are cut (tests cut finer).
	shards shardPlan
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

// spelling is one raw frame name and the method it normalizes to.
type spelling struct {
	name   string
	method int32
	filter int8 // 0 unknown, else its FilterClass (keep)
	peek   int8 // 0 unknown, 1 Options.Peek matches it, 2 not (peekTable)
}

// method is one interned method (normalized frame name) with its per-side
// values and the bucket mix of those values.
type method struct {
	name    string // the first raw name seen, module prefix removed (see label)
	key     string // symbolize.Normalize(name)
	family  string // a Go closure's family (symbolize.ClosureFamily), else ""
	val     [2]float64
	buckets [2][rules.NumBuckets]float64
	module  [2]string // first module seen on each side
	seen    uint64    // stamp for inclusive (cum) counting
	// native memoizes rules.Set.NativeNamed of key (Analyzer.nativeNamed):
	// 0 not asked yet, 1 no, 2 yes.
	native uint8
}

// sideMeta is what a side's profiles say about themselves. Values (totals,
// buckets, samples, durations) are not kept here: they are sums over the
// side's ProfileStats, the one record of what each profile contributed.
type sideMeta struct {
	kind       profile.Kind
	kinds      map[profile.Kind]bool
	period     int64
	periodType string
	periods    map[int64]bool
	dropped    int64
	threads    map[string]bool // values of the thread sample label (thread-time profiles)
	formats    map[profile.Format]bool
	format     profile.Format // of the first profile
	goVersion  string         // of the first profile that says
	goMissing  bool           // a profile of the side has no Go version
	// builds holds the main binary's build ID of each profile ("" when
	// a profile names none): one build on both sides cannot renumber
	// closures (closures.go).
	builds map[string]bool
}

// ProfileStats is what one added profile contributed, in the result's unit:
// the per-profile observation the gate tests, and the raw values the
// merged sides are summed from.
type ProfileStats struct {
	Source        string
	Side          result.Side
	Kind          profile.Kind
	Total         float64                   // value of the kept samples in a bucket (scheduler latency excluded)
	Buckets       [rules.NumBuckets]float64 // Total split by bucket
	Sched         float64                   // scheduler latency (runnable time), in no bucket
	Unknown       float64                   // native or blocked, unknown (Apart Unknown), in no bucket
	Samples       int64                     // samples behind the bucketed value (the count column, else records)
	Filtered      int64                     // sample records removed by Focus/Ignore
	DurationNanos int64
}

// add sums another profile's values into s.
// Counts saturate rather than wrap: each profile's own sums fit an int64
// (package profile checks them), a side of many such profiles may not.
func (s *ProfileStats) add(o *ProfileStats) {
	s.Total += o.Total
	s.Sched += o.Sched
	s.Unknown += o.Unknown
	s.Samples = addSat(s.Samples, o.Samples)
	s.Filtered = addSat(s.Filtered, o.Filtered)
	s.DurationNanos = addSat(s.DurationNanos, o.DurationNanos)
	for b := range s.Buckets {
		s.Buckets[b] += o.Buckets[b]
	}
}

// addSat is a+b for non-negative counts, or math.MaxInt64 past it.
func addSat(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// Analyzer accumulates profiles into two sides and computes a Result. Add
// classifies each sample once (see Sample) and streams it into compact
// per-method totals, per-profile statistics and any consumer registered
// with OnSample, so the profile can be released right after; memory is
// bounded by the number of distinct methods, not samples. Diff and Top are
// pure: they may be called any number of times, in any order.
type Analyzer struct {
	opts        Options
	rules       *rules.Set
	sampleType  string // "type/unit", fixed by the first profile
	typeSource  string
	typeFolded  bool // the first profile was folded stacks
	sawNettrace bool // a .nettrace profile was added (ModulesAuto)
	unit        string
	methods     []*method
	spellings   []spelling
	byName      map[string]int32 // raw frame name → spelling
	byKey       map[string]int32 // normalized name → method
	closures    closureInfo
	commKeys    map[string]string    // perf's comm label → its root frame's key (commRoot)
	anyClosure  bool                 // a method is a Go closure (see closures.go)
	closure     []bool               // by method id: a Go closure (a compact copy of method.family != "")
	std         []int8               // by method id: 0 unknown, else stdOther, stdLib or stdRuntime (callerIndex)
	splitMemo   map[string][2]string // splitModule
	sides       [2]sideMeta
	profiles    []ProfileStats
	consumers   []func(*Sample)
	warnings    []string // found while adding; Diff and Top add their own to a copy
	err         error    // a streamed profile's walk found it refused (Wait); no more are added
	// The profiles without the selected sample type, in the order added,
	// and the first error among those that cannot count as zero: Wait
	// decides once every profile is in (see checkSelected).
	lacking     []SourceTypes
	lackingErr  error
	lackingKind profile.Kind // Options.Kind, when it is what they lack
	stamp       uint64
	tree        *CallTree  // nil unless Options.CallTree
	peek        *peekTable // nil unless Options.Peek
	lead        *leadTally // deciders and callers per bucket, for the verdict
	typesMixed  bool       // folded stacks were compared with another sample type
	by          result.By  // Options.By, resolved by the first profile's kind
	format      profile.Format
	// scratch reused across samples
	smp Sample
	// walks in flight (parallel.go), merged in order; slots bounds the
	// shards walking at once.
	pending []*walkJob
	slots   chan struct{}
	expect  int // profiles the caller will add (Expect), 0 unknown
	// mfr holds, by method id, its frame rule once known (frameRuleOf)
	// in profiles of kind mfrKind, else the zero frameRule: four bytes a
	// method keep the walk's second lookup a frame in cache. A rule can
	// apply to some kinds only (Rule.Kinds), so each kind has its own
	// table: mfrs keeps the others' (useKind).
	mfr     []frameRule
	mfrKind profile.Kind
	mfrUsed bool
	mfrs    map[profile.Kind][]frameRule
	// infoFrames memoizes, per side, the frame of each function the
	// streaming decoder named (locResolver.infoFrame).
	infoFrames [2]map[*pull.Func]infoFrame
	shardWalk  bool // a shard: it walks part of one profile (parallel.go)
	// unpaired is shared with the Analyzer's shards: set once every
	// profile expected is registered and no closure needs pairing by its
	// neighbours (closureNeed), after which walks stop noting them.
	unpaired *atomic.Bool
	// overExpected says that a profile was registered past Expect's
	// count after walks stopped noting neighbours (closureNeed).
	overExpected bool
	sysMods      map[string]bool // IsSystemModule by module (systemModule)
}

// stopped is the cause of Options.Context once it has ended, else nil.
func (a *Analyzer) stopped() error { return stop.Now(a.opts.Context) }

// NewAnalyzer returns an Analyzer with the given options.
func NewAnalyzer(opts Options) *Analyzer {
	if opts.Top == 0 {
		opts.Top = DefaultTop
	}
	rs := opts.Rules
	if rs == nil {
		rs = rules.Default()
	}
	a := &Analyzer{opts: opts, rules: rs, byName: map[string]int32{}, byKey: map[string]int32{}, unpaired: new(atomic.Bool)}
	for i := range a.sides {
		a.sides[i].kinds = map[profile.Kind]bool{}
		a.sides[i].periods = map[int64]bool{}
	}
	if opts.CallTree || opts.Stacks {
		a.tree = newCallTree(true)
		a.tree.frames = opts.TreeFrames || !opts.CallTree
	}
	if opts.Peek != nil {
		a.peek = newPeekTable(opts.Peek)
	}
	a.lead = newLeadTally()
	a.by = opts.By
	a.smp.a = a
	return a
}

// OnSample registers a consumer of the classified-sample stream: fn is
// called for every kept sample of every profile added afterwards, after
// the Analyzer's own tables have taken it. The Sample and its Stack are
// reused: fn must not keep them.
func (a *Analyzer) OnSample(fn func(*Sample)) { a.consumers = append(a.consumers, fn) }

// Profiles returns what each added profile contributed, in the order added.
func (a *Analyzer) Profiles() []ProfileStats {
	a.flush()
	return append([]ProfileStats(nil), a.profiles...)
}

// variants counts, by method id, the names (spellings) the profiles gave
// each method's frames.
func (a *Analyzer) variants() []int32 {
	n := make([]int32, len(a.methods))
	for i := range a.spellings {
		n[a.spellings[i].method]++
	}
	return n
}

// label is a method's name in results, module not yet added: its one
// name when the profiles gave it one, else what all its names share, its
// normalized name (`work` for `work` and `work.part.0`, `crunch` for
// Rust's `crunch::h6206…` and `crunch::hb505…`), so that a row merged
// from several is never named after one of them.
func (m *method) label(variants int32) string {
	if variants > 1 {
		return m.key
	}
	return m.name
}

// MethodName returns the display name of a method id of Sample.Stack.
func (a *Analyzer) MethodName(id int32) string {
	a.flush()
	return a.methods[id].name
}

// Spelling returns the raw frame name of a spelling id of Sample.Spellings.
func (a *Analyzer) Spelling(sp int32) string {
	a.flush()
	return a.spellings[sp].name
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
	return 0, &NoSampleTypeError{Sel: sel, Has: SampleTypes(p)}
}

// ErrNoSampleType is the sentinel of the errors for a sample type selector
// (Options.SampleIndex) that a profile, or every profile, lacks, or for a
// selected type that cannot hold Options.Kind's values.
var ErrNoSampleType = errors.New("no such sample type")

// NoSampleTypeError is SampleTypeIndex's error for a selector that names
// no sample type of the profile. With Kind set, it is checkSampleType's
// error for a selected type, Type, whose values cannot be read as
// Options.Kind (see kindFits).
type NoSampleTypeError struct {
	Sel, Has string
	Kind     profile.Kind
	Type     string
}

func (e *NoSampleTypeError) Error() string {
	if e.Kind != "" {
		return fmt.Sprintf("sample type %s cannot be read as kind %s (it has %s)", e.Type, e.Kind, e.Has)
	}
	return fmt.Sprintf("no sample type %q (it has %s)", e.Sel, e.Has)
}

func (e *NoSampleTypeError) Unwrap() error { return ErrNoSampleType }

// SourceTypes is a profile's source and its sample types ("type/unit,
// type/unit").
type SourceTypes struct{ Source, Has string }

// AbsentSampleTypeError is Wait's error when no profile added has the
// selected sample type: a misspelt or misplaced selector, not a recording
// that happened to have no such events. Inputs lists every profile's types.
// With Kind set, no profile's selected type can be read as that kind.
type AbsentSampleTypeError struct {
	Sel    string
	Kind   profile.Kind
	Inputs []SourceTypes // in the order added
}

// Error groups the inputs by their sample types, in the order first seen,
// naming at most three sources per group.
func (e *AbsentSampleTypeError) Error() string {
	var order []string
	srcs := map[string][]string{}
	for _, in := range e.Inputs {
		if _, ok := srcs[in.Has]; !ok {
			order = append(order, in.Has)
		}
		srcs[in.Has] = append(srcs[in.Has], in.Source)
	}
	parts := make([]string, len(order))
	for i, has := range order {
		names := srcs[has]
		list := strings.Join(names[:min(len(names), 3)], ", ")
		if len(names) > 3 {
			list += fmt.Sprintf(" and %d more", len(names)-3)
		}
		verb := "has"
		if len(names) > 1 {
			verb = "have"
		}
		parts[i] = fmt.Sprintf("%s %s %s", list, verb, has)
	}
	if e.Kind != "" {
		return fmt.Sprintf("no input's selected sample type can be read as kind %s: %s", e.Kind, strings.Join(parts, "; "))
	}
	return fmt.Sprintf("no input has sample type %q: %s", e.Sel, strings.Join(parts, "; "))
}

func (e *AbsentSampleTypeError) Unwrap() error { return ErrNoSampleType }

// kindFits reports whether values in unit can be read as kind k: a heap
// profile's are bytes or object counts, a goroutine profile's counts, the
// time kinds' time or sample counts; unknown (and no kind) takes any.
func kindFits(k profile.Kind, unit string) bool {
	switch k {
	case "", profile.KindUnknown:
		return true
	case profile.KindHeap:
		return unit == "bytes" || unit == "count"
	case profile.KindGoroutine:
		return unit == "count"
	}
	switch unit {
	case "count", "nanoseconds", "microseconds", "milliseconds", "seconds":
		return true
	}
	return false
}

// checkSelected is Wait's check of the selected sample type once every
// profile is added: an error when no profile has it, or the error of the
// first profile without it that cannot count as zero (a format whose
// sample types are not events) when others have it.
func (a *Analyzer) checkSelected() error {
	switch {
	case len(a.lacking) == 0:
		return nil
	case a.sampleType == "":
		return &AbsentSampleTypeError{Sel: a.opts.SampleIndex, Kind: a.lackingKind, Inputs: a.lacking}
	}
	return a.lackingErr
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
// then says so); a profile that fails is not added. A profile without the
// selected type (Options.SampleIndex, or one whose values cannot be read
// as Options.Kind) fails when one added before has it (but a JFR or perf
// script profile, whose types are events, counts as zero); while none has,
// it is set aside and Wait says whether any profile had it. AddInput may
// also fail with the error of a profile added before it, whose walk in
// parallel found it refused (see Wait); no more are added then.
func (a *Analyzer) Add(side result.Side, l *profile.Loaded) error { return a.add(side, l, nil) }

// AddInput is Add for an Input: a profile the streaming decoder prepared
// (Prepare) is classified as its samples are read from its bytes, which
// are released afterwards; any other is added with Add.
func (a *Analyzer) AddInput(side result.Side, in *Input) error {
	d := in.d
	in.d = nil // the bytes and tables are garbage once added
	return a.add(side, in.l, d)
}

// add is Add, reading the samples from d when it is not nil.
func (a *Analyzer) add(side result.Side, l *profile.Loaded, d *pull.File) error {
	if a.err != nil {
		return a.err // a profile added before was refused (Wait)
	}
	parallel := d != nil && a.WalksInParallel()
	if !parallel {
		// A serial walk meets methods after those in flight.
		for len(a.pending) > 0 {
			if err := a.mergeOldest(); err != nil {
				return err
			}
		}
	}
	if d != nil && d.IDsLater() && !parallel {
		// A serial walk: the ids check Prepare left to the walk runs
		// before the profile is added, so that one pprof refuses is not
		// (and a consumer sees none of its samples).
		if err := d.CheckLaterIDs(); err != nil {
			ml, err := d.Model()
			if err != nil {
				return err
			}
			l, d = ml, nil
		}
	}
	idx, err := a.checkSampleType(l)
	var none *NoSampleTypeError
	if errors.As(err, &none) {
		a.lacking = append(a.lacking, SourceTypes{Source: l.Source, Has: none.Has})
		if none.Kind != "" {
			a.lackingKind = none.Kind
		}
		switch {
		case eventTypes(l.Format) && none.Kind == "":
			return a.addWithout(side, l, none.Sel)
		case a.sampleType == "":
			// Whether any profile has the type is known at Wait.
			if a.lackingErr == nil {
				a.lackingErr = err
			}
			return nil
		}
	}
	if err != nil {
		return err
	}
	kind := a.kindOf(l, idx)
	a.register(side, l, kind)
	if parallel {
		return a.walkShards(side, len(a.profiles)-1, d, idx, kind)
	}
	if d != nil {
		a.walkStream(side, len(a.profiles)-1, d, idx, kind)
		return nil
	}
	a.walk(side, len(a.profiles)-1, l.Profile, idx, kind)
	return nil
}

// register records a profile of kind on side before its samples are
// walked: the attribution default, the format, the side's metadata and its
// ProfileStats.
func (a *Analyzer) register(side result.Side, l *profile.Loaded, kind profile.Kind) {
	if a.by == "" {
		a.by = result.DefaultBy(kind)
	}
	if a.format == "" {
		a.format = l.Format
	}
	a.noteMeta(side, l, kind)
	a.profiles = append(a.profiles, ProfileStats{Source: l.Source, Side: side, Kind: kind, DurationNanos: l.Profile.DurationNanos})
	a.closureNeed()
}

// eventTypes reports whether a format's sample types are its events, a
// type present only where such an event occurred (a JFR recording without
// sleeps has no sleep type, a perf recording without page faults no
// page-faults type).
func eventTypes(f profile.Format) bool {
	return f == profile.FormatJFR || f == profile.FormatPerfScript
}

// addWithout adds a profile that lacks the selected event type: it
// recorded none of those events, so it counts as zero on its side, with a
// warning, instead of failing the comparison.
func (a *Analyzer) addWithout(side result.Side, l *profile.Loaded, typ string) error {
	kind := a.opts.Kind
	if kind == "" {
		kind = profile.KindOfType(l, typ)
	}
	a.register(side, l, kind)
	a.warnings = append(a.warnings, fmt.Sprintf("%s recorded no %q events: counted as zero", l.Source, typ))
	return nil
}

// checkSampleType returns the index of the selected sample type of l and
// checks it against the profiles added before.
func (a *Analyzer) checkSampleType(l *profile.Loaded) (int, error) {
	p := l.Profile
	idx, err := SampleTypeIndex(p, a.opts.SampleIndex)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", l.Source, err)
	}
	st := p.SampleType[idx].Type + "/" + p.SampleType[idx].Unit
	if !kindFits(a.opts.Kind, p.SampleType[idx].Unit) {
		return 0, fmt.Errorf("%s: %w", l.Source, &NoSampleTypeError{Sel: a.opts.SampleIndex, Has: SampleTypes(p), Kind: a.opts.Kind, Type: st})
	}
	folded := l.Format == profile.FormatFolded
	switch {
	case a.sampleType == "":
		a.sampleType, a.typeSource, a.unit, a.typeFolded = st, l.Source, p.SampleType[idx].Unit, folded
	case st == a.sampleType:
	case a.typeFolded || folded:
		// Folded stacks do not say what they count (stackcollapse-perf.pl
		// sums perf's periods, other collapsers count samples), and shares
		// are compared, not values: a folded side compares with any type.
		a.typesMixed = true
		a.warnings = append(a.warnings, fmt.Sprintf("comparing %s (%s) with %s (%s): folded stacks do not say what they count; shares are compared", a.typeSource, a.sampleType, l.Source, st))
	default:
		return 0, &SampleTypeError{First: a.typeSource, FirstType: a.sampleType, Source: l.Source, Type: st, Has: SampleTypes(p)}
	}
	return idx, nil
}

// SampleTypeError is Add's error for a profile whose selected sample type
// differs from the profiles added before. Has lists the types the profile
// offers, so a caller can say how to pick a shared one.
type SampleTypeError struct {
	First, FirstType string // the first profile added and its type/unit
	Source, Type     string // the profile refused and its type/unit
	Has              string // Source's sample types, "type/unit, type/unit"
}

func (e *SampleTypeError) Error() string { return e.Message("") }

// Message is Error with a caller's hint on how to pick a shared type
// ("pick a shared one with --sample-index") before the list of types.
func (e *SampleTypeError) Message(hint string) string {
	if hint != "" {
		hint += "; "
	}
	return fmt.Sprintf("sample types differ: %s has %s, %s has %s (%s%s has %s)", e.First, e.FirstType, e.Source, e.Type, hint, e.Source, e.Has)
}

// kindOf is the kind l is analysed as: Options.Kind, else what loading
// detected.
func (a *Analyzer) kindOf(l *profile.Loaded, idx int) profile.Kind {
	switch {
	case a.opts.Kind != "":
		return a.opts.Kind
	case l.Kind != "":
		return profile.TypeKind(l, idx)
	}
	return profile.DetectKind(l.Profile)
}

// noteMeta records what l says about its side: kind, period, format.
func (a *Analyzer) noteMeta(side result.Side, l *profile.Loaded, kind profile.Kind) {
	if l.Format == profile.FormatNettrace {
		a.sawNettrace = true
	}
	s, p := &a.sides[side], l.Profile
	s.kinds[kind] = true
	if s.kind == "" {
		s.kind = kind
	}
	s.dropped += l.Dropped
	if s.formats == nil {
		s.formats = map[profile.Format]bool{}
	}
	s.formats[l.Format] = true
	if s.format == "" {
		s.format = l.Format
	}
	if s.builds == nil {
		s.builds = map[string]bool{}
	}
	s.builds[mainBuildID(p)] = true
	switch {
	case l.GoVersion == "":
		s.goMissing = true
	case s.goVersion == "":
		s.goVersion = l.GoVersion
	}
	if p.Period != 0 {
		s.periods[p.Period] = true
		s.period = p.Period
		if p.PeriodType != nil {
			s.periodType = p.PeriodType.Type + "/" + p.PeriodType.Unit
		}
	}
}

// take is the Analyzer's own consumer of the sample stream: per-profile
// values, per-method values (self by Options.By, or inclusive), and the
// call tree when asked for.
func (a *Analyzer) take(s *Sample, ps *ProfileStats) {
	switch s.Apart {
	case Sched:
		// Scheduler latency (a trace's runnable time, a goroutine not yet
		// started) is reported on its own (Result.Sched), outside the
		// buckets and the method table; so is native-or-blocked time
		// nothing can place (Result.Unknown).
		ps.Sched += s.Value
		return
	case Unknown:
		ps.Unknown += s.Value
		return
	}
	ps.Total += s.Value
	ps.Samples += s.Count
	ps.Buckets[s.Bucket] += s.Value
	if a.tree != nil {
		a.tree.add(s, a.treeNarrow())
	}
	if a.peek != nil {
		a.peek.add(a, s)
	}
	if a.anyClosure && !a.unpaired.Load() {
		a.noteClosures(s.Side, s.Stack)
	}
	caller := s.Caller()
	a.lead.add(s, caller)
	if a.opts.Cum {
		a.stamp++
		for _, id := range s.Stack {
			m := a.methods[id]
			if m.seen == a.stamp {
				continue
			}
			m.seen = a.stamp
			m.credit(s.Side, s.Bucket, s.Value)
		}
		return
	}
	var target int
	switch a.by {
	case result.ByFrame:
		target = s.Leaf()
	case result.ByCaller:
		target = caller
	default:
		target = max(s.Decider, 0)
	}
	a.methods[s.Stack[target]].credit(s.Side, s.Bucket, s.Value)
}

// treeNarrow says whether every id the call tree holds fits 16 bits:
// method ids, or spelling ids for a tree of frames (Options.TreeFrames).
func (a *Analyzer) treeNarrow() bool {
	if a.tree.frames {
		return len(a.spellings) <= 1<<16
	}
	return len(a.methods) <= 1<<16
}

func (m *method) credit(side result.Side, b rules.Bucket, v float64) {
	m.val[side] += v
	m.buckets[side][b] += v
}
