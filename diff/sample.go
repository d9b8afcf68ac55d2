package diff

import (
	"errors"
	"regexp"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/classify"
	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
	"github.com/profdiff/profdiff/symbolize"
)

// Sample is one sample of an added profile as the classifier decided it:
// the single stream every consumer reads (the Analyzer's tables, the
// gate's checks, call trees). A sample is classified once, here; nobody
// re-walks a profile with rules of their own.
//
// Stack and the frame rules behind Leaf and Caller are scratch buffers:
// valid only during the consumer's call.
type Sample struct {
	Side    result.Side
	Profile int          // index into Analyzer.Profiles
	Value   float64      // of the selected sample type, in the result's unit
	Count   int64        // samples behind this record: the count column, else 1
	Bucket  rules.Bucket // meaningless when Apart is set
	// Apart marks time kept apart from the buckets and the method rows:
	// scheduler latency, or native-or-blocked time nothing can place.
	Apart Apart
	// Stack holds method ids, leaf first (Analyzer.MethodName names them).
	Stack []int32
	// Spellings holds, frame by frame, which raw name the profile gave the
	// method (Analyzer.Spelling): `Foo(int)` and `Foo` are one method in
	// Stack and two spellings here. Filled only with Options.Spellings.
	Spellings []int32
	// Decider is the index in Stack of the frame that decided Bucket
	// (the leaf-most non-skip frame when no rule did), -1 for a sample
	// the profile gave no stack: its Stack is the one pseudo-frame
	// NoStack, so that every sum that counts it (the method table, call
	// trees, folded stacks) names it.
	Decider int

	frames []frameRule
	a      *Analyzer
}

// Leaf is the index in Stack of the frame the sample's own time is spent
// in: the first frame that is not a skip frame (0 for an empty stack).
func (s *Sample) Leaf() int { return classify.LeafIndex(s.frames) }

// Caller is the index in Stack of the program's own code behind the
// sample's bucket (see ByCaller); 0 for an empty stack.
func (s *Sample) Caller() int {
	return max(s.a.callerIndex(s.Stack, s.frames, s.Decider), 0)
}

// walk classifies every sample of p with a non-zero value of the sample
// type at idx and hands it to the Analyzer's tables and the consumers.
func (a *Analyzer) walk(side result.Side, prof int, p *pprofile.Profile, idx int, kind profile.Kind) {
	pr := pull.FromProfile(p)
	w := a.newWalker(side, prof, a.newLocResolver(pr, p.Function, side), idx, CountColumn(p, idx), kind)
	chk := stop.New(a.opts.Context)
	for {
		rec, err := pr.Next()
		if err != nil || chk.Err() != nil {
			return // io.EOF (a model profile's reader fails no other way), or stopped (Options.Context)
		}
		w.sample(rec)
	}
}

// walker holds what classifying the samples of one profile needs; both
// the pprof model's walk and the pull reader's hand it records.
type walker struct {
	a             *Analyzer
	lr            *locResolver
	ps            *ProfileStats
	meta          *sideMeta
	idx, countIdx int
	kind          profile.Kind
	filtering     bool
	// spellings: the sample's spellings are read (Sample.Spellings), for
	// Options.Spellings, for Focus, Ignore and Peek, which match the
	// name each frame has in the profile, and for a tree of frames
	// (Options.TreeFrames).
	spellings bool
}

func (a *Analyzer) newWalker(side result.Side, prof int, lr *locResolver, idx, countIdx int, kind profile.Kind) *walker {
	a.smp.Side, a.smp.Profile = side, prof
	a.useKind(kind)
	filtering := a.opts.Focus != nil || a.opts.Ignore != nil
	return &walker{a: a, lr: lr, ps: &a.profiles[prof], meta: &a.sides[side], idx: idx, countIdx: countIdx,
		kind: kind, filtering: filtering, spellings: filtering || a.opts.Spellings || a.peek != nil || a.tree != nil && a.tree.frames}
}

// sample classifies one record (skipped when its value is zero) and hands
// it to the Analyzer's tables and the consumers.
func (w *walker) sample(rec *pull.Record) {
	a, lr, kind, filtering := w.a, w.lr, w.kind, w.filtering
	v := float64(rec.Values[w.idx])
	if v == 0 {
		return
	}
	if len(rec.Labels) > 0 {
		w.meta.noteThread(rec)
	}
	s := &a.smp
	s.Stack, s.Spellings, s.frames = lr.frames(s.Stack[:0], s.Spellings[:0], s.frames[:0], rec, kind, filtering, w.spellings)
	if filtering && !a.keep(s.Spellings) {
		w.ps.Filtered++
		return
	}
	if filtering {
		// keep ran on ids alone; rules are resolved for kept samples only.
		s.frames = s.frames[:0]
		for i := range rec.IDs {
			s.frames = lr.appendRules(s.frames, lr.entryAt(rec, i), kind)
		}
	}
	w.classified(s, rec, v)
}

// samplePacked is sample for a streamed record whose location ids are
// still packed (pull.Record.Packed: no filter, no spellings): they are
// read, checked and resolved in one pass (locResolver.framesPacked). It
// fails, the sample not taken, where an id is no location's or a varint
// does not end within the field.
func (w *walker) samplePacked(rec *pull.Record) error {
	a, lr := w.a, w.lr
	v := float64(rec.Values[w.idx])
	if v == 0 {
		// Not walked, but checked, as the reader checks the ids of
		// every sample it reads.
		return lr.checkPacked(rec.Packed, rec.PackedAt)
	}
	if len(rec.Labels) > 0 {
		w.meta.noteThread(rec)
	}
	s := &a.smp
	var err error
	if s.Stack, s.frames, err = lr.framesPacked(s.Stack[:0], s.frames[:0], rec.Packed, rec.PackedAt, w.kind); err != nil {
		return err
	}
	s.Spellings = s.Spellings[:0]
	w.classified(s, rec, v)
	return nil
}

// classified finishes a sample whose stack and frame rules are found:
// it is decided and handed to the tables and the consumers.
func (w *walker) classified(s *Sample, rec *pull.Record, v float64) {
	a, kind := w.a, w.kind
	a.commRoot(s, rec)
	s.Value, s.Count = v, 1
	if w.countIdx >= 0 {
		s.Count = rec.Values[w.countIdx]
	}
	if len(s.Stack) == 1 && a.methods[s.Stack[0]].key == NoStack {
		// Folded stacks profdiff wrote: the stackless sample it named.
		s.Stack, s.frames, s.Spellings = s.Stack[:0], s.frames[:0], s.Spellings[:0]
	}
	a.decide(s, rec, kind)
	if len(s.Stack) == 0 {
		f := a.intern(NoStack, "", s.Side)
		s.Stack, s.frames = append(s.Stack, f.id), append(s.frames, classify.Pseudo())
		if w.spellings {
			s.Spellings = append(s.Spellings, f.sp)
		}
	}
	a.take(s, w.ps)
	for _, c := range a.consumers {
		c(s)
	}
}

// NoStack is the pseudo-frame that stands for the stack of a sample its
// profile recorded without one (a Go heap profile's allocations whose
// stack was not kept): the sample is decided as stackless, then counted
// under this frame wherever its value is.
const NoStack = "[no stack]"

// commRoot takes the frame rule off a stack's root frame when that frame
// names the sample's "comm" label: the process name perf script's reader
// adds as the root frame (as stackcollapse-perf.pl does). A thread's name
// is no code and never decides a bucket: a process named sleep is no call
// of sleep. The frame stays in the stack, by its name, for display.
func (a *Analyzer) commRoot(s *Sample, rec *pull.Record) {
	if len(rec.Labels) == 0 {
		return
	}
	c, one := rec.Label("comm")
	n := len(s.Stack)
	if !one || c == "" || n == 0 || len(s.frames) != n {
		return
	}
	key, ok := a.commKeys[c]
	if !ok {
		if a.commKeys == nil {
			a.commKeys = map[string]string{}
		}
		key = symbolize.Normalize(strings.ReplaceAll(c, " ", "_"))
		a.commKeys[c] = key
	}
	if a.methods[s.Stack[n-1]].key == key {
		s.frames[n-1] = classify.Pseudo()
	}
}

// noteThread records the thread label of a thread-time sample.
func (m *sideMeta) noteThread(rec *pull.Record) {
	if th, ok := rec.Label(profile.LabelThread); ok {
		if m.threads == nil {
			m.threads = map[string]bool{}
		}
		m.threads[th] = true
	}
}

// frames appends the method ids of a record's frames to stack, their
// spelling ids to spell when asked, and, unless only ids are needed yet
// (filtering: rules wait until the sample is kept), their frame rules to
// frames. A frame is found by its location's ID: a resolved one costs no
// load of its Location.
func (r *locResolver) frames(stack, spell []int32, frames []frameRule, rec *pull.Record, kind profile.Kind, idsOnly, spellings bool) ([]int32, []int32, []frameRule) {
	ids := rec.IDs
	if spellings {
		for _, id := range ids {
			spell = r.appendSpellings(spell, r.entryByID(id))
		}
	}
	if idsOnly {
		for _, id := range ids {
			stack = r.appendIDs(stack, r.entryByID(id))
		}
		return stack, spell, frames
	}
	one, mfr := r.one, r.a.mfr
	for _, id := range ids {
		// Fast path: a resolved location of up to oneMaxN frames whose
		// rules are known, with no calls but knownRules' (inlined) so the
		// loads of successive frames overlap.
		if id < uint64(len(one)) {
			switch v := one[id]; {
			case v > 0:
				if fr := mfr[v-1]; fr.Known() {
					stack = append(stack, v-1)
					frames = append(frames, fr)
					continue
				}
			case v < 0: // several frames (inlined calls)
				x := uint32(-(v + 1))
				ms := r.idv[x>>3 : x>>3+x&7]
				if knownRules(mfr, ms) {
					stack = append(stack, ms...)
					for _, m := range ms {
						frames = append(frames, mfr[m])
					}
					continue
				}
			}
		}
		e := r.entryByID(id)
		stack = r.appendIDs(stack, e)
		frames = r.appendRules(frames, e, kind)
		mfr = r.a.mfr // new methods may have grown it
	}
	return stack, spell, frames
}

// framesPacked is frames (no spellings, rules resolved) for the
// location ids packed at data[p:], the whole of data the field: each is
// read (pull.Varint3), checked as the pull reader checks ids, and
// resolved, so the resolver's loads of one frame overlap the reading of
// the next. It fails where an id is no location's or a varint does not
// end within the field, having resolved the ids before it.
func (r *locResolver) framesPacked(stack []int32, frames []frameRule, data []byte, p int, kind profile.Kind) ([]int32, []frameRule, error) {
	e := len(data)
	d := r.src
	n1 := d.DenseLocations()
	one, mfr := r.one, r.a.mfr
	for p < e {
		// The id's varint: three bytes at most inline (pull.Varint3),
		// else the reader's loop.
		id, q := pull.Varint3(data, p)
		if q == p {
			v, q2, ok := pull.VarintSlow(data, p)
			if !ok {
				return stack, frames, errBadIDs
			}
			id, q = v, q2
		}
		p = q
		if n1 > 0 {
			if id-1 >= n1 {
				return stack, frames, errFallback
			}
		} else if !d.HasLocation(id) {
			return stack, frames, errFallback
		}
		// The fast path of frames, written out again: as a method it
		// is too large to be inlined (cost 135), and a call a frame
		// would stall the loop this fusing is for.
		if id < uint64(len(one)) {
			switch v := one[id]; {
			case v > 0:
				if fr := mfr[v-1]; fr.Known() {
					stack = append(stack, v-1)
					frames = append(frames, fr)
					continue
				}
			case v < 0:
				x := uint32(-(v + 1))
				ms := r.idv[x>>3 : x>>3+x&7]
				if knownRules(mfr, ms) {
					stack = append(stack, ms...)
					for _, m := range ms {
						frames = append(frames, mfr[m])
					}
					continue
				}
			}
		}
		le := r.entryByID(id)
		stack = r.appendIDs(stack, le)
		frames = r.appendRules(frames, le, kind)
		mfr = r.a.mfr // new methods may have grown it
	}
	return stack, frames, nil
}

// errBadIDs is a packed field of location ids whose last varint does not
// end within it: pprof refuses the profile (Analyzer.settle).
var errBadIDs = errors.New("bad varint in a sample's location ids")

// checkPacked checks the packed location ids at data[p:] (a record's
// Packed field) as framesPacked does, resolving none.
func (r *locResolver) checkPacked(data []byte, p int) error {
	n1 := r.src.DenseLocations()
	for p < len(data) {
		id, q := pull.Varint3(data, p)
		if q == p {
			v, q2, ok := pull.VarintSlow(data, p)
			if !ok {
				return errBadIDs
			}
			id, q = v, q2
		}
		p = q
		if n1 > 0 && id-1 >= n1 || n1 == 0 && !r.src.HasLocation(id) {
			return errFallback
		}
	}
	return nil
}

// notStarted reports a goroutine that was created but has not run yet,
// in a wall-clock (fgprof) or goroutine profile: runtime.GoroutineProfile
// records it with a stack of runtime.goexit alone. It is runnable,
// waiting for a P: scheduler latency, as a trace's runnable time is.
func (a *Analyzer) notStarted(s *Sample, kind profile.Kind) bool {
	return (kind == profile.KindWall || kind == profile.KindGoroutine) && len(s.Stack) == 1 &&
		a.methods[s.Stack[0]].key == "runtime.goexit"
}

// knownRules reports whether the frame rules of methods ms are all known
// (mfr: Analyzer.mfr).
func knownRules(mfr []frameRule, ms []int32) bool {
	for _, m := range ms {
		if !mfr[m].Known() {
			return false
		}
	}
	return true
}

// callerIndex implements ByCaller (see there). When every rule-free frame
// is the standard library's (a goroutine of net/http or testing), the
// first one outside package runtime stands in for the program (time.Sleep,
// net/http.(*conn).serve), not the scheduler's runtime.gopark. The JVM's
// class library (java.*, javax.*, jdk.*, sun.*, and the kotlin and scala
// standard libraries) is skipped the same way: a pool worker's
// ThreadPoolExecutor$Worker.run or Thread.run is never the caller when the
// program's own frames are on the stack. So is .NET's (System.*,
// Microsoft.*, and any frame of a System.* or Microsoft.* assembly, such
// as Interop+Sys in System.Net.Sockets): a Console.ReadLine or a
// Monitor.Enter is charged to the program's method that called it. So is
// Node's (node:fs.readSync, node:internal/timers.listOnTimeout, as the V8
// reader names its built-in modules).
func (a *Analyzer) callerIndex(stack []int32, frames []frameRule, at int) int {
	if at < 0 {
		return at
	}
	free, freeLib := -1, -1
	for i := at; i < len(stack); i++ {
		if frames[i].Ruled() || frames[i].Synthetic() && i > at {
			continue
		}
		if free < 0 {
			free = i
		}
		std := a.std[stack[i]] // a compact table: no method struct to load
		if std == 0 {
			std = stdClass(a.methods[stack[i]].key)
			a.std[stack[i]] = std
		}
		if std == stdOther && frames[i].SysModule() {
			std = libClass(a.methods[stack[i]].key) // this frame's module is a system library's
		}
		switch {
		case std == stdOther:
			return i
		case std == stdLib && freeLib < 0:
			freeLib = i
		}
	}
	switch {
	case freeLib >= 0:
		return freeLib
	case free >= 0:
		return free
	}
	return at
}

// systemModule matches the kernel and the C and C++ runtime libraries
// (glibc's, the dynamic loader, libstdc++, libgcc), by the module name a
// frame carries (perf script's dso, a pprof mapping's file), and .NET's
// class library assemblies (System.Private.CoreLib, System.Console,
// Microsoft.AspNetCore.Server.Kestrel.Core: a nettrace frame's module).
var systemModule = regexp.MustCompile(`^\[kernel|vmlinux|^\[vdso\]$|^(libc|libpthread|libm|libdl|librt|libresolv|libutil|libnss_\w+|ld-linux[\w.-]*|ld|libstdc\+\+|libgcc_s|libc\+\+|libc\+\+abi|libunwind)([.-]|$)|^(System|Microsoft)\.|^(System|mscorlib|netstandard)(\.dll)?$`)

// IsSystemModule reports whether a frame's module (a mapping file's base
// name, a perf dso) is the kernel or a system library: the machinery under
// a native program's own code, which --by caller passes over as it passes
// over Go's standard library, and package diff/wait's sites skip.
func IsSystemModule(module string) bool {
	return module != "" && systemModule.MatchString(module)
}

// systemModule is IsSystemModule, memoized by module: a profile names
// few, and its methods each ask once per walk.
func (a *Analyzer) systemModule(module string) bool {
	if module == "" {
		return false
	}
	sys, ok := a.sysMods[module]
	if !ok {
		if a.sysMods == nil {
			a.sysMods = map[string]bool{}
		}
		sys = IsSystemModule(module)
		a.sysMods[module] = sys
	}
	return sys
}

// jvmLibRoots are the package roots of the JDK's and the JVM languages'
// standard libraries, as Normalize writes them (dots, not slashes).
var jvmLibRoots = []string{"java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala."}

// dotnetLibRoots are the namespaces of .NET's class library, ASP.NET
// Core and the other Microsoft.* packages.
var dotnetLibRoots = []string{"System.", "Microsoft."}

// isNodeLib reports whether a frame name is a function of one of Node's
// built-in modules ("node:fs.readSync"; see profile/v8).
func isNodeLib(key string) bool { return strings.HasPrefix(key, "node:") }

// isJVMLib reports whether a normalized frame name is a JVM standard
// library method ("java.util.concurrent.ThreadPoolExecutor$Worker.run").
func isJVMLib(key string) bool { return hasRoot(key, jvmLibRoots) }

// isDotnetLib reports whether a normalized frame name is a .NET class
// library method ("System.Threading.Monitor.Enter").
func isDotnetLib(key string) bool { return hasRoot(key, dotnetLibRoots) }

// hasRoot reports whether key starts with one of roots.
func hasRoot(key string, roots []string) bool {
	for _, r := range roots {
		if strings.HasPrefix(key, r) {
			return true
		}
	}
	return false
}

// stdClass is what a method's normalized name says of it: stdRuntime for
// Go's package runtime, stdLib for the rest of Go's standard library and
// the JVM's and .NET's class libraries and Node's built-in modules, else stdOther. A frame's module adds to it
// (frSysModule), frame by frame.
func stdClass(key string) int8 {
	if symbolize.IsGoStd(key) || isJVMLib(key) || isDotnetLib(key) || isNodeLib(key) {
		return libClass(key)
	}
	return stdOther
}

// libClass is the class of a standard or system library's method:
// stdRuntime for Go's package runtime, else stdLib.
func libClass(key string) int8 {
	if strings.HasPrefix(key, "runtime.") || strings.HasPrefix(key, "runtime/") {
		return stdRuntime
	}
	return stdLib
}

// Values of Analyzer.std: whether a method is the program's own code.
const (
	stdOther   = 1 // not a standard library
	stdLib     = 2 // Go's standard library outside package runtime, or the JVM's or .NET's
	stdRuntime = 3 // package runtime (and runtime/...)
)

// CountColumn returns the index of the sample type of p that counts the
// sampled events behind each record of the sample type at idx, -1 when
// there is none (each record is then one event). It is the column noise
// is judged by: samples, contentions or goroutine counts; for heap
// profiles inuse_objects beside inuse_* and alloc_objects beside alloc_*;
// the selected type itself when it is a count of events (samples/count,
// a unit of "samples"); else the first other count column (a Go trace's
// intervals: measured, not sampled). Never a summed period: a type that is the
// profile's period type with a period above 1 (perf's cycles with
// -c 1000000) weighs each event by the period, so it is not a count.
func CountColumn(p *pprofile.Profile, idx int) int {
	find := func(typ string) int {
		for i, t := range p.SampleType {
			if t.Type == typ && t.Unit == "count" && !summedPeriod(p, i) {
				return i
			}
		}
		return -1
	}
	sel := p.SampleType[idx]
	switch {
	case strings.HasPrefix(sel.Type, "inuse_"):
		if i := find("inuse_objects"); i >= 0 {
			return i
		}
	case strings.HasPrefix(sel.Type, "alloc_"):
		if i := find("alloc_objects"); i >= 0 {
			return i
		}
	}
	for _, typ := range []string{"samples", "contentions", "goroutine", "goroutines", "count"} {
		if i := find(typ); i >= 0 {
			return i
		}
	}
	if sel.Unit == "samples" || sel.Unit == "count" && !summedPeriod(p, idx) {
		return idx
	}
	// Any other count (a Go trace's intervals, which are measured, not
	// sampled, and many).
	for i, t := range p.SampleType {
		if t.Unit == "count" && !summedPeriod(p, i) {
			return i
		}
	}
	return -1
}

// summedPeriod reports whether the sample type at i sums a sampling
// period over events: it is the period type and the period exceeds 1.
func summedPeriod(p *pprofile.Profile, i int) bool {
	t := p.SampleType[i]
	return p.PeriodType != nil && p.PeriodType.Type == t.Type && p.PeriodType.Unit == t.Unit && p.Period > 1
}
