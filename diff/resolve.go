package diff

import (
	"path"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/classify"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
	"github.com/profdiff/profdiff/symbolize"
)

// locResolver maps the locations of one profile to method ids, spelling
// ids (the raw name of each frame, see Sample.Spellings) and frame rules,
// memoized per location: a location with one frame (the common case) keeps
// it in its entry, others in flat arenas, idv and spv at
// [e.off:e.off+e.n]; frame rules are the methods' (Analyzer.frameRuleOf).
// Locations are indexed by ID in a slice when IDs are dense (as every
// pprof writer makes them), else by a map. Functions are memoized the
// same way, so a name is split and interned once per profile.
type locResolver struct {
	a    *Analyzer
	side result.Side
	// The locations ids name: a pprof protobuf's (src), or a model
	// profile's read as records (model).
	src   *pull.File
	model *pull.ProfileReader
	dense []locEntry
	// one is the frames' fast path, by location ID like dense: the
	// method id + 1 of a resolved location with one frame; for one of
	// 2..oneMaxN frames, -1 - (off<<3 | n), its frames at idv[off:off+n];
	// 0 when not resolved yet. Four bytes a location keep the table of a
	// large profile in cache.
	one      []int32
	byID     map[uint64]*locEntry // entries by ID when IDs are not dense
	idv      []int32
	spv      []int32
	sysv     []bool    // frame.sys of the frames at idv
	scriptv  []bool    // frame.script of the frames at idv
	fnDense  []fnEntry // by Function.ID, made with fnDenseN entries (-1: fnMap) when first set
	fnDenseN int
	fnMap    map[fnAt]frame
	// byFn is, by index in src.Funcs() (resolveID), the function's frame
	// (id -1 until met), in the mapping byFnMap names: a function's
	// module can come from its location's mapping, so the memo serves
	// locations of that mapping only.
	byFn    []frame
	byFnMap []int32
	buf     []symbolize.Frame
	fbuf    []frame // scratch for resolve
}

// The most frames, and the highest arena offset, of a location with
// several frames that the fast path (locResolver.one) holds.
const (
	oneMaxN   = 7
	oneMaxOff = 1 << 27
)

type fnEntry struct {
	fn      *pprofile.Function
	mapping *pprofile.Mapping
	f       frame
}

// fnAt is a function in a location of a mapping: a function's frame
// depends on both (its module can be the mapping's file).
type fnAt struct {
	fn      *pprofile.Function
	mapping *pprofile.Mapping
}

// frame is one frame of a location: its method, the spelling of its
// name, whether its module is a system library's (IsSystemModule),
// which --by caller passes over as it passes over a standard library,
// and whether it is a script's function (scriptFile) of a name that a
// rule marked native matches (rules.Set.NativeNamed): its rule is then
// classify.ScriptRuleOf's, not its method's (a JavaScript send is not
// libc's).
type frame struct {
	id, sp int32
	sys    bool
	script bool
}

type locEntry struct {
	n      uint32 // frames; 0: not resolved yet (a location has ≥ 1 frame)
	off    uint32 // in idv, spv, sysv and scriptv when n > 1
	id, sp int32  // the frame when n == 1
	sys    bool   // the frame's module is a system library's, when n == 1
	script bool   // frame.script, when n == 1
}

func (a *Analyzer) newLocResolver(model *pull.ProfileReader, fns []*pprofile.Function, side result.Side) *locResolver {
	maxFn := uint64(0)
	for _, f := range fns {
		maxFn = max(maxFn, f.ID)
	}
	r := a.newLocResolverN(model.MaxID(), model.Locations(), maxFn, len(fns), side)
	r.model = model
	return r
}

// newLocResolverN is newLocResolver for n locations of IDs up to maxLoc
// and nFn functions of IDs up to maxFn.
func (a *Analyzer) newLocResolverN(maxLoc uint64, n int, maxFn uint64, nFn int, side result.Side) *locResolver {
	r := &locResolver{a: a, side: side}
	if maxLoc <= uint64(4*n+16) {
		r.dense = prefaulted[locEntry](int(maxLoc) + 1)
		r.one = prefaulted[int32](int(maxLoc) + 1)
	} else {
		r.byID = make(map[uint64]*locEntry, n)
	}
	// The function memo is made when resolve first meets a function: a
	// streamed profile's walk mostly resolves by ID (resolveID).
	r.fnDenseN = -1
	if maxFn <= uint64(4*nFn+16) {
		r.fnDenseN = int(maxFn) + 1
	}
	return r
}

// prefaulted makes a slice of n zero values and writes them: a table the
// walk reads before it writes each entry (dense, one) would otherwise map
// each page to the kernel's zero page on the read and fault again on the
// write, a copy and a flush of every core's TLB (perf on the 200k pair:
// about 3% of the CPU in do_wp_page, most of it in finish). Writing it
// first costs one fault a page.
func prefaulted[T any](n int) []T {
	s := make([]T, n)
	clear(s)
	return s
}

// location is the location an id of a record names.
func (r *locResolver) location(id uint64) *pprofile.Location {
	if r.src != nil {
		return r.src.Location(id)
	}
	return r.model.Location(id)
}

// entryAt is the memo entry of a record's location i, resolved on first
// sight: found by ID, so a resolved location costs no load of its
// *pprofile.Location.
func (r *locResolver) entryAt(rec *pull.Record, i int) *locEntry { return r.entryByID(rec.IDs[i]) }

// entryByID is the memo entry of the location with an ID, resolved on
// first sight (see entryAt).
func (r *locResolver) entryByID(id uint64) *locEntry {
	if r.dense != nil && id < uint64(len(r.dense)) {
		e := &r.dense[id]
		if e.n == 0 {
			r.resolveID(e, id)
		}
		return e
	}
	if r.byID == nil {
		r.byID = map[uint64]*locEntry{}
	}
	e := r.byID[id]
	if e == nil {
		e = &locEntry{}
		r.byID[id] = e
	}
	if e.n == 0 {
		r.resolve(e, r.location(id))
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

// appendSpellings appends the spelling ids of a resolved location's frames.
func (r *locResolver) appendSpellings(dst []int32, e *locEntry) []int32 {
	if e.n == 1 {
		return append(dst, e.sp)
	}
	return append(dst, r.spv[e.off:e.off+e.n]...)
}

// appendRules appends the frame rules of a resolved location's frames,
// each marked when its module is a system library's (frSysModule); a
// script's frame that a native rule names has its own (frame.script).
func (r *locResolver) appendRules(dst []frameRule, e *locEntry, kind profile.Kind) []frameRule {
	if e.n == 1 {
		return append(dst, r.a.frameRuleAt(e.id, kind, e.script).InSystem(e.sys))
	}
	for i, id := range r.idv[e.off : e.off+e.n] {
		j := e.off + uint32(i)
		dst = append(dst, r.a.frameRuleAt(id, kind, r.scriptv[j]).InSystem(r.sysv[j]))
	}
	return dst
}

// resolveID resolves the streamed location with an ID: from the
// decoder's compact copy of its lines when it has one (no load of the
// Location, its Lines or Functions), else as resolve does.
func (r *locResolver) resolveID(e *locEntry, id uint64) {
	d := r.src
	var fns []int32
	mapping, ok := int32(-1), false
	if d != nil {
		fns, mapping, ok = d.LocFuncs(id)
	}
	if !ok {
		r.resolve(e, r.location(id))
		return
	}
	if r.byFn == nil {
		n := len(d.Funcs())
		r.byFn, r.byFnMap = make([]frame, n), make([]int32, n)
		for i := range r.byFn {
			r.byFn[i].id = -1
		}
	}
	fs := r.fbuf[:0]
	for _, fi := range fns {
		f := r.byFn[fi]
		if f.id < 0 || r.byFnMap[fi] != mapping {
			mapFile := ""
			if mapping >= 0 {
				mapFile = d.MappingBase(mapping)
			}
			f = r.infoFrame(d.Funcs()[fi], mapFile)
			// The file is read only for a name a native rule matches.
			f.script = r.a.nativeNamed(f.id) && scriptFile(d.FuncFile(fi))
			r.byFn[fi], r.byFnMap[fi] = f, mapping
		}
		fs = append(fs, f)
	}
	r.finish(e, id, fs)
}

// infoFrame is newFrame for a function the streaming decoder named (in),
// memoized across the profiles an Analyzer walks by the name's memo
// entry (a pointer: no string to hash), side and module: a gate's 400
// profiles name mostly the same functions, and its serial walk would
// look each up again by name in every profile. The memo holds one entry
// per function met, as the method table does.
func (r *locResolver) infoFrame(in *pull.Func, mapFile string) frame {
	nm := nameOf(in)
	mod := nm.module(mapFile)
	if r.a.shardWalk {
		return r.a.internNamed(nm.rest, mod, r.side, nm) // one profile's part: byFn is the memo
	}
	memo := r.a.infoFrames[r.side]
	if e, ok := memo[in]; ok && e.mod == mod {
		return e.f
	}
	f := r.a.internNamed(nm.rest, mod, r.side, nm)
	if memo == nil {
		memo = map[*pull.Func]infoFrame{}
		r.a.infoFrames[r.side] = memo
	}
	if len(memo) < infoFramesCap {
		memo[in] = infoFrame{f: f, mod: mod}
	}
	return f
}

// infoFramesCap bounds Analyzer.infoFrames: past fnMemoCap names, each
// profile's functions are entries of their own, and a long serial walk
// would keep them all.
const infoFramesCap = 1 << 20

// infoFrame is a function's frame on one side, with the module it was
// interned with (Analyzer.infoFrames).
type infoFrame struct {
	f   frame
	mod string
}

// newFrame is symbolize.LocationFrames' frame for a line of a function met
// for the first time: the module its name carries, else mapFile (the base
// name of its location's mapping's file, "" for none). nm is what the
// streaming decoder made of the name; nil on the model path, where the
// name is split here, its module memoized across profiles.
func (r *locResolver) newFrame(name string, nm *fnName, mapFile string) frame {
	if nm == nil {
		mod, rest := r.a.splitModule(name)
		if mod == "" {
			mod = mapFile
		}
		return r.a.intern(rest, mod, r.side)
	}
	return r.a.internNamed(nm.rest, nm.module(mapFile), r.side, nm)
}

// module is the module a frame of the function takes: its name's, else
// mapFile.
func (nm *fnName) module(mapFile string) string {
	if nm.mod == "" {
		return mapFile
	}
	return nm.mod
}

func (r *locResolver) resolve(e *locEntry, loc *pprofile.Location) {
	a := r.a
	fs := r.fbuf[:0]
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
		mapFile := ""
		if loc.Mapping != nil {
			mapFile = path.Base(loc.Mapping.File)
		}
		for _, ln := range loc.Line {
			f, ok := r.funcFrame(ln.Function, loc.Mapping)
			if !ok {
				// The streaming decoder named its functions already,
				// several profiles at once.
				var pre *fnName
				if in, ok := r.src.FuncOf(ln.Function); ok {
					pre = nameOf(in)
				}
				f = r.newFrame(ln.Function.Name, pre, mapFile)
				f.script = r.a.scriptNamed(f.id, ln.Function.Filename)
				r.setFuncFrame(ln.Function, loc.Mapping, f)
			}
			fs = append(fs, f)
		}
	} else {
		r.buf = symbolize.LocationFrames(r.buf[:0], loc)
		for _, sf := range r.buf {
			f := a.intern(sf.Name, sf.Module, r.side)
			f.script = a.scriptNamed(f.id, sf.File)
			fs = append(fs, f)
		}
	}
	r.finish(e, loc.ID, fs)
}

// finish fills a location's entry with its frames fs. A location with a
// frame in a system library, or a script's frame that a native rule
// names, stays off the fast path (one), whose frame rules are the
// methods' alone.
func (r *locResolver) finish(e *locEntry, id uint64, fs []frame) {
	r.fbuf = fs[:0]
	e.n = uint32(len(fs))
	fast := id < uint64(len(r.one)) && e == &r.dense[id]
	if e.n == 1 {
		e.id, e.sp, e.sys, e.script = fs[0].id, fs[0].sp, fs[0].sys, fs[0].script
		if fast && !e.sys && !e.script {
			r.one[id] = e.id + 1
		}
		return
	}
	e.off = uint32(len(r.idv))
	for _, f := range fs {
		r.idv, r.spv, r.sysv, r.scriptv = append(r.idv, f.id), append(r.spv, f.sp), append(r.sysv, f.sys), append(r.scriptv, f.script)
		fast = fast && !f.sys && !f.script
	}
	if fast && e.n <= oneMaxN && e.off < oneMaxOff {
		r.one[id] = -int32(e.off<<3|e.n) - 1
	}
}

// splitModule is symbolize.SplitModule, memoized by name: the same
// functions come back in every profile added.
func (a *Analyzer) splitModule(name string) (module, rest string) {
	if m, ok := a.splitMemo[name]; ok {
		return m[0], m[1]
	}
	module, rest = symbolize.SplitModule(name)
	if a.splitMemo == nil {
		a.splitMemo = map[string][2]string{}
	}
	a.splitMemo[name] = [2]string{module, rest}
	return module, rest
}

// funcFrame returns the frame of a function seen before in a location of
// mapping (fn and mapping may be nil).
func (r *locResolver) funcFrame(fn *pprofile.Function, mapping *pprofile.Mapping) (frame, bool) {
	if r.fnDense != nil && fn != nil && fn.ID < uint64(len(r.fnDense)) {
		if e := &r.fnDense[fn.ID]; e.fn == fn && e.mapping == mapping {
			return e.f, true
		}
	}
	f, ok := r.fnMap[fnAt{fn, mapping}]
	return f, ok
}

func (r *locResolver) setFuncFrame(fn *pprofile.Function, mapping *pprofile.Mapping, f frame) {
	if r.fnDense == nil && r.fnDenseN >= 0 {
		r.fnDense, r.fnDenseN = make([]fnEntry, r.fnDenseN), -1
	}
	if r.fnDense != nil && fn != nil && fn.ID < uint64(len(r.fnDense)) {
		if e := &r.fnDense[fn.ID]; e.fn == nil {
			e.fn, e.mapping, e.f = fn, mapping, f
			return
		}
	}
	// Not dense, nil, two functions with one ID (a hand-built profile),
	// or a function met again in another mapping.
	if r.fnMap == nil {
		r.fnMap = map[fnAt]frame{}
	}
	r.fnMap[fnAt{fn, mapping}] = f
}

// intern returns the method and the spelling of a raw frame name,
// creating them on first sight. Methods are identified by their normalized
// name, so `Foo(int)` and `Foo` from two writers are one method with two
// spellings.
func (a *Analyzer) intern(raw, module string, side result.Side) frame {
	return a.internNamed(raw, module, side, nil)
}

// internNamed is intern with, when nm is not nil, the normalized name and
// closure family of raw worked out already (nm.key, nm.family).
func (a *Analyzer) internNamed(raw, module string, side result.Side, nm *fnName) frame {
	sp, ok := a.byName[raw]
	if !ok {
		var key string
		if nm != nil {
			key = nm.key
		} else {
			key = symbolize.Normalize(raw)
		}
		id, known := a.byKey[key]
		if !known {
			id = int32(len(a.methods))
			m := &method{name: raw, key: key}
			if nm != nil {
				m.family = nm.family
			} else {
				m.family = closureFamily(key)
			}
			a.anyClosure = a.anyClosure || m.family != ""
			a.closure = append(a.closure, m.family != "")
			a.mfr, a.std = append(a.mfr, frameRule{}), append(a.std, 0)
			a.methods = append(a.methods, m)
			a.byKey[key] = id
		}
		sp = int32(len(a.spellings))
		a.spellings = append(a.spellings, spelling{name: raw, method: id})
		a.byName[raw] = sp
	}
	id := a.spellings[sp].method
	if m := a.methods[id]; module != "" && m.module[side] == "" {
		m.module[side] = module
	}
	return frame{id: id, sp: sp, sys: a.systemModule(module)}
}

// useKind makes a.mfr the frame-rule memo of profiles of kind k, keeping
// the table it held for its kind: a method's rule is matched once per
// kind of profile it is met in, whatever was walked before.
func (a *Analyzer) useKind(k profile.Kind) {
	if !a.mfrUsed || a.mfrKind == k {
		a.mfrKind, a.mfrUsed = k, true // the first kind takes the table as made
		return
	}
	if a.mfrs == nil {
		a.mfrs = map[profile.Kind][]frameRule{}
	}
	a.mfrs[a.mfrKind] = a.mfr
	t := a.mfrs[k]
	delete(a.mfrs, k)
	if n := len(a.methods); len(t) < n {
		t = append(t, make([]frameRule, n-len(t))...)
	}
	a.mfr, a.mfrKind = t, k
}

// frameRuleAt is the frame rule of a frame of method id in a profile of
// kind: a script's that a native rule names (frame.script) has
// classify.ScriptRuleOf's, memoized by the rule set; any other its
// method's (frameRuleOf).
func (a *Analyzer) frameRuleAt(id int32, kind profile.Kind, script bool) frameRule {
	if script {
		return classify.ScriptRuleOf(a.rules, a.methods[id].key, kind)
	}
	return a.frameRuleOf(id, kind)
}

// scriptNamed is frame.script for a frame of method id whose function's
// source file is file.
func (a *Analyzer) scriptNamed(id int32, file string) bool {
	return scriptFile(file) && a.nativeNamed(id)
}

// nativeNamed is rules.Set.NativeNamed of method id's name, asked once a
// method: a serial walk (the gate's) resolves each profile's functions
// anew, the same methods in each of its hundreds of profiles, and the
// rules' literal filter costs several map lookups a name.
func (a *Analyzer) nativeNamed(id int32) bool {
	m := a.methods[id]
	if m.native == 0 {
		m.native = 1
		if a.rules.NativeNamed(m.key) {
			m.native = 2
		}
	}
	return m.native == 2
}

// frameRuleOf is a method's frame rule in a profile of kind (a.mfr is
// the memo of that kind: useKind).
func (a *Analyzer) frameRuleOf(id int32, kind profile.Kind) frameRule {
	if !a.mfr[id].Known() {
		a.mfr[id] = classify.RuleOf(a.rules, a.methods[id].key, kind)
	}
	return a.mfr[id]
}

// keep applies Options.Focus and Ignore to a sample's spellings (pprof
// semantics: focus keeps samples with any matching frame, ignore drops
// samples with any matching frame). A frame matches by the name the
// profile gave it, so the answer is the sample's own, whatever other
// spellings of its method were met first.
func (a *Analyzer) keep(spellings []int32) bool {
	if a.opts.Focus == nil && a.opts.Ignore == nil {
		return true
	}
	focused := a.opts.Focus == nil
	for _, sp := range spellings {
		s := &a.spellings[sp]
		if s.filter == 0 {
			s.filter = int8(a.opts.FilterClass(s.name))
		}
		switch FilterClass(s.filter) {
		case Ignored:
			return false
		case Focused:
			focused = true
		}
	}
	return focused
}

// FilterClass is what Options.Focus and Ignore say about one frame name.
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
