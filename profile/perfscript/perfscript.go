// Package perfscript reads the text that Linux `perf script` prints into the
// shared data model, *github.com/google/pprof/profile.Profile.
//
// The input is a sequence of samples, each an event header line followed by
// its stack, leaf first, one frame a line, and a blank line:
//
//	java 24636/25607 [000] 4794564.109216:     250000 cycles:u:
//		    7f0a1b2c3d4e Lcom/example/Foo;::bar+0x1c (/tmp/perf-24636.map)
//		    ffffffff8103ce3b native_safe_halt ([kernel.kallsyms])
//
// The reading mirrors Brendan Gregg's stackcollapse-perf.pl (FlameGraph), so
// a profile parsed here and the output of `stackcollapse-perf.pl --all` for
// the same file hold the same stacks with the same weights:
//
//   - Header: `[comm] [pid/]tid [[cpu]] [time:] [period] event: [fields]`.
//     The comm may hold spaces and digits; everything but the tid and the
//     event is optional. The event is the first token ending in `:` after
//     the numbers, so `cycles:u:`, `cpu-clock:` and `sched:sched_switch:`
//     name the events `cycles:u`, `cpu-clock` and `sched:sched_switch`.
//     Anything after the event (tracepoint fields) is ignored, except that
//     a trailing `addr sym (dso)` (perf script without a call graph prints
//     the sampled ip there) becomes the sample's only frame.
//   - Frame: `addr sym[+0xoff] (dso)`. The symbol is everything between the
//     address and the final parenthesized dso, so C++ names with spaces and
//     parentheses survive (and `(/lib/x.so (deleted))` is one dso). The
//     `+0x...` offset is dropped; the address is kept as Location.Address.
//     Frames may be indented (usual) or not (some old tools). A sample ends
//     at a blank line, at the next header, or at the end of the text
//     (stackcollapse-perf.pl drops a last sample not followed by a blank
//     line; Parse keeps it). Lines starting with `#` are comments; indented
//     `file.c:123` lines (perf script -F +srcline) are skipped with a
//     warning. A frame whose symbol starts with `(`, except
//     `(anonymous namespace)`, is skipped as stackcollapse-perf.pl does.
//   - Names are tidied like stackcollapse-perf.pl does: `;` becomes `:`,
//     a trailing parameter list is dropped (see cutParams: lambdas,
//     `(anonymous namespace)` and Rust's `<()>` keep their parentheses)
//     unless the name looks like a Go method (`pkg.(*T).M`),
//     quotes are removed, and in a process whose comm is `java` a leading
//     `L` of a slashed class name goes (`Ljava/lang/Thread;::run` becomes
//     `java/lang/Thread:::run`). `[unknown]` (and a missing symbol, `addr
//     (dso)`) becomes `[dso basename]` when the dso is known (an already
//     bracketed dso such as `[kernel.kallsyms]` is not bracketed twice), else
//     `[unknown]`. Function.Name is the tidied name, Function.SystemName the
//     symbol as printed without its offset. `a->b` (inlined frames as old perf and
//     stackcollapse's --inline print them) and frames whose dso is
//     `(inlined)` become extra lines of one pprof Location.
//   - The `_[k]` (kernel) and `_[j]` (perf-map JIT) annotations that
//     `stackcollapse-perf.pl --all` appends are NOT added to names: the
//     dso is kept as the Location's Mapping (File is the dso as printed:
//     `[kernel.kallsyms]`, `/lib/modules/.../vmlinux`, `/tmp/perf-1234.map`),
//     which says the same thing without changing the function's name.
//   - The comm (spaces turned into `_`, as stackcollapse-perf.pl does) is the
//     root frame of every stack. The comm, pid and tid are also kept as
//     sample labels (`comm` string label, `pid` and `tid` numeric labels; pid
//     only when the header has one). The root frame's name is always the
//     comm label with spaces turned into `_` (its SystemName the comm as
//     printed), which tells a consumer the root is the process name, not
//     code: the classifier lets it decide no bucket (a process named sleep
//     is no call of sleep).
//
// Values: one sample type per distinct event, in order of first appearance,
// never summed across events; samples of events after the first MaxEvents
// are left out with a warning that counts them, so that memory stays linear
// in the input (pprof stores a value per sample type in every sample). A
// sample's value is the header's period when the header has one and it is
// not 0 (cycles counted, nanoseconds of cpu-clock), else 1, as in
// stackcollapse-perf.pl. The unit is "nanoseconds" for cpu-clock and
// task-clock with periods, "count" for other events with periods and
// "samples" for events whose headers carry no period. When any event's
// headers carry periods, a last sample type, samples/count, holds the number
// of samples (headers of any kept event) behind each record: records of one
// stack, comm and thread are merged and their values are summed periods, so
// this is what sampling noise is judged by. The sum of one event's values
// over the whole file must fit in an int64 (so no record and no total of the
// event wraps): a period that makes it overflow is an error naming its
// header line. DefaultSampleType and PeriodType name the first event (for
// off-CPU time see defaultType), so a
// consumer that honours DefaultSampleType reads the first event by default,
// as stackcollapse-perf.pl (which keeps only the first event) does.
//
// sched:sched_switch samples (the stack where a thread gave up its CPU)
// become off-CPU time when the text also says when each thread came back
// (see offcpu.go): sample type off-cpu/nanoseconds, each switch-out record
// charged the time until the thread's next switch-in, preempted (prev_state
// R) time labelled as scheduler latency, blocked time labelled with the
// fallback bucket no frame rule overrules (io for D, else wait), each
// switch-out's record apart from other events' records of the same stack
// and thread. Without any switch-in they are
// counted like any other event, one count per switch, with the same
// labels (a counted switch-out is never cpu either). PERF_RECORD_SWITCH
// lines (perf script --show-switch-events) only mark switch-ins and outs;
// they are not samples. sched:sched_waking (and sched:sched_wakeup)
// samples, taken in the waker's context, name the waker of the woken
// thread's off-CPU interval: the switch-out's record is split by waker,
// with the waker's stack and thread in labels (see waker.go and the
// README). CriticalPaths reads the same text as a timeline per thread
// and follows its wake-ups back (see critical.go). OnCPUEvent and
// OffCPUEvent classify event names for kind detection.
//
// Period is the first event's first period (1 without periods);
// DurationNanos spans the first to the last time stamp when headers carry
// them.
package perfscript

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/loaderr"
	"github.com/profdiff/profdiff/profile/internal/perfevent"
	"github.com/profdiff/profdiff/symbolize"
)

// MaxFrames is the deepest stack a sample may have (perf's own limit,
// kernel.perf_event_max_stack, is at most 65535).
const MaxFrames = 1 << 16

// MaxEvents is the number of distinct events that become sample types.
// pprof gives every sample a value for every sample type, so a file of N
// events in N records would need N x N values (15,000 events in 1 MB: 2.5
// GB); samples of later events are left out with a warning, which keeps
// memory linear in the input. Real recordings have a few events; a glob
// such as `perf record -e 'sched:*'` a few dozen.
const MaxEvents = 64

// maxWarnings bounds the warnings one parse returns.
const maxWarnings = 20

var (
	// An event header. Groups: comm, pid or tid, tid, cpu, time, period,
	// event, rest. matchHeader matches it without the regexp. The comm is optional and lazy so that the first
	// `N[/N]` token followed by a well-formed tail is the pid/tid.
	headerRE = regexp.MustCompile(`^\s*(?:(.*?)\s+)??(-?\d+)(?:/(-?\d+))?\s+(?:\[(\d+)\]\s+)?(?:(\d+(?:\.\d+)?):\s+)?(?:(\d+)\s+)?(\S+):(?:\s+(.*?))?\s*$`)
	// A Go method name such as net/http.(*Client).Do keeps its parentheses
	// (see isGoMethod).
	goMethodRE = regexp.MustCompile(`\.\(.*\)\.`)
	// Quotes are dropped from names.
	quotes = strings.NewReplacer(`"`, "", `'`, "")
	// A source line that `perf script -F +srcline` prints under a frame.
	srclineRE = regexp.MustCompile(`^\S+:\d+$`)
	// A perf map (JIT symbols): /tmp/perf-PID.map.
	perfMapRE = regexp.MustCompile(`(^|/)perf-\d+\.map$`)
)

// header is one parsed event header line.
type header struct {
	comm      string
	pid, tid  int64
	hasPID    bool
	time      float64
	hasTime   bool
	period    int64
	hasPeriod bool
	event     string
	fields    string     // what follows the event (tracepoint fields)
	ns        int64      // time in nanoseconds, when hasTime
	frame     *frameLine // a sampled ip printed on the header line itself
	line      int        // its line number, for messages
}

// frameLine is one parsed stack frame line.
type frameLine struct {
	addr uint64
	sym  string // as printed, the +0x offset removed; "" when missing
	dso  string // "" when missing
}

// isHex reports whether s is a non-empty hex number (perf prints addresses
// without 0x; a 0x prefix is accepted).
func isHex(s string) bool {
	_, ok := hexValue(s)
	return ok
}

func parseHex(s string) uint64 {
	v, _ := hexValue(s)
	return v
}

// hexValue reads s as isHex and parseHex do, in one pass: ok when s is a
// hex number, v its value (0 when it is none or does not fit 64 bits, as
// strconv.ParseUint fails for it).
func hexValue(s string) (v uint64, ok bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return 0, false
	}
	overflow := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		if v>>60 != 0 {
			overflow = true
		}
		v = v<<4 | uint64(d)
	}
	if overflow {
		return 0, true
	}
	return v, true
}

// splitDSO splits `sym (dso)` at the final balanced parenthesized group. ok
// is false when s does not end in one.
func splitDSO(s string) (sym, dso string, ok bool) {
	i := symbolize.FinalGroup(s)
	// The dso group must be preceded by whitespace or start the text;
	// `foo(int)` is a symbol, not a dso.
	if i < 0 || i > 0 && s[i-1] != ' ' && s[i-1] != '\t' {
		return s, "", false
	}
	return strings.TrimSpace(s[:i]), s[i+1 : len(s)-1], true
}

// cutOffset drops the `+0x1c` offset perf 4.8+ prints after a symbol:
// `+0x` and one or more hex digits that end the text.
func cutOffset(sym string) string {
	i := len(sym)
	for i > 0 && isHexDigit(sym[i-1]) {
		i--
	}
	if i < len(sym) && strings.HasSuffix(sym[:i], "+0x") {
		return sym[:i-3]
	}
	return sym
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// parseFrame reads `addr [sym] [(dso)]` (leading whitespace already gone).
// needDSO requires the `(dso)` group; hexAddr requires a hex address.
func parseFrame(t string, needDSO, hexAddr bool) (frameLine, bool) {
	addr, rest := t, ""
	if i := strings.IndexAny(t, " \t"); i >= 0 {
		addr, rest = t[:i], strings.TrimSpace(t[i+1:])
	}
	av, isHexAddr := hexValue(addr)
	if addr == "" || (hexAddr && !isHexAddr) {
		return frameLine{}, false
	}
	sym, dso, ok := splitDSO(rest)
	if !ok {
		if needDSO {
			return frameLine{}, false
		}
		sym, dso = rest, ""
	}
	if !hexAddr && !isHexAddr && sym == "" {
		return frameLine{}, false // a lone word is not a frame
	}
	sym = cutOffset(sym)
	return frameLine{addr: av, sym: sym, dso: strings.TrimSpace(dso)}, true
}

// parseHeader reads an event header line. It returns ok false when the line
// is not one, and an error when it is one with an unreadable number.
func parseHeader(line string) (header, bool, error) {
	m, ok := headerGroups(line)
	if !ok {
		return header{}, false, nil
	}
	var h header
	var err error
	h.comm = strings.TrimSpace(m.comm)
	num := func(s, what string) int64 {
		v, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil && err == nil {
			err = fmt.Errorf("bad %s %q", what, s)
		}
		return v
	}
	if m.tid != "" {
		h.pid, h.hasPID = num(m.pid, "pid"), true
		h.tid = num(m.tid, "tid")
	} else {
		h.tid = num(m.pid, "tid")
	}
	if m.time != "" {
		h.time, _ = strconv.ParseFloat(m.time, 64)
		h.hasTime = !math.IsInf(h.time, 0)
		h.ns, _ = parseNanos(m.time)
	}
	if m.period != "" {
		h.period, h.hasPeriod = num(m.period, "period"), true
	}
	h.event = m.event
	h.fields = m.fields
	if isNumber(h.event) && err == nil {
		// `1.0: -5 cycles:` reads as event "1.0" with fields: the period
		// is what is wrong, and it must not become an event.
		err = fmt.Errorf("no event name after %q (a negative or malformed period?)", h.event+":")
	}
	if rest := m.fields; strings.HasSuffix(rest, ")") {
		h.frame = trailingFrame(rest)
	}
	return h, true, err
}

// headerGroups returns headerRE's submatches 1-8 of line, by
// matchHeader; a line holding a newline, which no line of the text
// does, is left to the regexp, whose `.` stops at newlines.
func headerGroups(line string) (headerFields, bool) {
	if strings.IndexByte(line, '\n') >= 0 {
		m := headerRE.FindStringSubmatch(line)
		if m == nil {
			return headerFields{}, false
		}
		return headerFields{m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]}, true
	}
	return matchHeader(line)
}

// trailingFrame finds `addr sym (dso)` at the end of a header's trailing
// fields: the last hex token with at least one symbol token between it and
// the dso.
func trailingFrame(rest string) *frameLine {
	sym, dso, ok := splitDSO(rest)
	if !ok || sym == "" || strings.ContainsAny(dso, " \t") {
		return nil
	}
	f := strings.Fields(sym)
	for i := len(f) - 2; i >= 0; i-- {
		if isHex(f[i]) && len(f[i]) >= 4 {
			s := cutOffset(strings.Join(f[i+1:], " "))
			return &frameLine{addr: parseHex(f[i]), sym: s, dso: dso}
		}
	}
	return nil
}

func indented(line string) bool {
	return line != "" && (line[0] == ' ' || line[0] == '\t')
}

// lineKind is what one line of perf script text is.
type lineKind int

const (
	kindOther lineKind = iota
	kindBlank
	kindComment
	kindHeader
	kindFrame
	kindSrcline
	kindSwitch // a PERF_RECORD_SWITCH line (perf script --show-switch-events)
)

// classify tells what line is; inSample says whether a header came since
// the last blank line (frames are only expected there).
func classify(line string, inSample bool) (lineKind, header, frameLine, error) {
	t := strings.TrimSpace(line)
	switch {
	case t == "":
		return kindBlank, header{}, frameLine{}, nil
	case line[0] == '#':
		return kindComment, header{}, frameLine{}, nil
	}
	// An indented hex address with a (dso) is a frame, even if its symbol
	// happens to read like a header; otherwise headers come first.
	if inSample && indented(line) {
		if f, ok := parseFrame(t, true, true); ok {
			return kindFrame, header{}, f, nil
		}
	}
	if h, ok := parseSwitch(line); ok {
		return kindSwitch, h, frameLine{}, nil
	}
	h, ok, err := parseHeader(line)
	if ok {
		return kindHeader, h, frameLine{}, err
	}
	if f, ok := parseFrame(t, !indented(line), true); ok {
		return kindFrame, header{}, f, nil
	}
	if indented(line) && srclineRE.MatchString(t) {
		return kindSrcline, header{}, frameLine{}, nil
	}
	// Synthetic dumps write a word for the address: `address sym (dso)`.
	if f, ok := parseFrame(t, true, false); ok && indented(line) {
		return kindFrame, header{}, f, nil
	}
	return kindOther, header{}, frameLine{}, nil
}

// Looks reports whether text (decoded UTF-8, BOM stripped) is perf script
// output: among its first lines (comments and blank lines aside), event
// headers and stack frames, with at least one header, outnumber all other
// lines. Folded stacks (`a;b;c 12`) are neither.
func Looks(text string) bool {
	text = strings.TrimPrefix(text, "\uFEFF")
	if len(text) > 64<<10 {
		text = text[:64<<10]
	}
	headers, frames, other := 0, 0, 0
	inSample := false
	for n := 0; len(text) > 0 && n < 1000; {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		line = strings.TrimRight(line, "\r")
		k, _, _, err := classify(line, inSample)
		switch k {
		case kindBlank:
			inSample = false
			continue
		case kindComment:
			continue
		case kindSwitch:
			headers++
		case kindHeader:
			if err != nil {
				other++
			} else {
				headers++
				inSample = true
			}
		case kindFrame, kindSrcline:
			if inSample {
				frames++
			} else {
				other++
			}
		default:
			other++
		}
		n++
	}
	return headers > 0 && headers+frames > other
}

// Parse reads perf script text (decoded UTF-8; a BOM and CRLF line ends are
// accepted) into a profile. See the package comment for what it builds.
// Warnings say what was skipped or assumed. A line that is neither a
// header, a frame, a comment nor blank fails the parse with its line number.
func Parse(text string) (p *profile.Profile, warnings []string, err error) {
	return parse(text, newBuilder())
}

// parse is Parse with the builder given (CriticalPaths' records a
// timeline as well).
func parse(text string, b *builder) (p *profile.Profile, warnings []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, warnings, err = nil, nil, fmt.Errorf("perf script: parser failed: %v", r)
		}
	}()
	text = strings.TrimPrefix(text, "\uFEFF")
	lineNo := 0
	var cur *header
	var frames []frameLine
	srclines := 0
	// flush adds the sample read so far; an error names its header line.
	flush := func() error {
		if cur == nil {
			return nil
		}
		err := b.add(cur, frames)
		if err != nil {
			err = lineErr(cur.line, err.Error(), "")
		}
		cur, frames = nil, frames[:0]
		return err
	}
	for len(text) > 0 {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		lineNo++
		line = strings.TrimRight(line, "\r")
		k, h, f, cerr := classify(line, cur != nil)
		switch k {
		case kindBlank, kindSwitch:
			if err := flush(); err != nil {
				return nil, nil, err
			}
			if err := b.switchLine(k, &h); err != nil {
				return nil, nil, lineErr(lineNo, err.Error(), "")
			}
		case kindComment:
		case kindHeader:
			if cerr != nil {
				return nil, nil, lineErr(lineNo, "malformed event header ("+cerr.Error()+")", line)
			}
			if err := flush(); err != nil {
				return nil, nil, err
			}
			hh := h
			hh.line = lineNo
			cur = &hh
			if h.frame != nil {
				frames = append(frames, *h.frame)
			}
		case kindFrame:
			if cur == nil {
				return nil, nil, lineErr(lineNo, "stack frame before any event header", line)
			}
			if len(frames) >= MaxFrames {
				return nil, nil, lineErr(lineNo, fmt.Sprintf("stack deeper than %d frames", MaxFrames), line)
			}
			frames = append(frames, f)
		case kindSrcline:
			if cur == nil {
				return nil, nil, lineErr(lineNo, "not a perf script event header or stack frame", line)
			}
			srclines++
		default:
			if cur != nil {
				return nil, nil, lineErr(lineNo, "malformed stack frame (want `addr symbol (dso)`)", line)
			}
			return nil, nil, lineErr(lineNo, "malformed event header (want `comm pid/tid [cpu] time: [period] event:`)", line)
		}
	}
	if err := flush(); err != nil {
		return nil, nil, err
	}
	if srclines > 0 {
		b.warn(fmt.Sprintf("skipped %d source-line (srcline) line(s) under frames", srclines))
	}
	p, err = b.finish()
	if err != nil {
		return nil, nil, err
	}
	return p, b.warnings, nil
}

func lineErr(n int, what, line string) error {
	const max = 120
	if len(line) > max {
		cut := max
		for cut > 0 && line[cut]&0xC0 == 0x80 { // keep UTF-8 whole
			cut--
		}
		line = line[:cut] + "..."
	}
	if line == "" {
		return fmt.Errorf("perf script: line %d: %s", n, what)
	}
	return fmt.Errorf("perf script: line %d: %s: %q", n, what, line)
}

// event is one distinct event name and what its headers carried.
type event struct {
	name                   string
	withPeriod, withoutPer int64 // samples with and without a period
	firstPeriod            int64
	total                  int64 // the sum of its values over all records
	offTotal, offClosed    int64 // off-CPU nanoseconds and intervals (sched_switch)
}

// sampleAcc is one record (stack, comm, pid, tid) being summed. Its values
// are sparse, sorted by event index: a record usually sees one event or a
// few of many, and dense values are only built for the kept events.
type sampleAcc struct {
	s     *profile.Sample
	vals  []eventValue
	state switchState // sched_switch records: what prev_state says (0 otherwise)
}

// eventValue is what one record holds for one event.
type eventValue struct {
	ei  int   // index into builder.events
	v   int64 // summed values
	n   int64 // headers behind v
	off int64 // off-CPU nanoseconds (sched:sched_switch)
}

type funcKey struct{ name, sys, dso string }

type builder struct {
	*build.Builder[funcKey, string]
	events   []*event
	eventIdx map[string]int
	samples  map[string]*sampleAcc
	order    []*sampleAcc
	warnings []string
	nwarn    int
	ignored  int // samples of events after the first MaxEvents
	off      offCPU
	minTime  float64
	maxTime  float64
	hasTime  bool
	key      []byte
	locBuf   []*profile.Location
	// locs files frame locations by their key (see location), looked up
	// from locKey without a copy.
	locs   map[string]*profile.Location
	locKey []byte
	byAddr map[uint64][]addrLocation // see plainLocation
	// The records of switch-outs by waker, and the waker stacks (see
	// waker.go).
	wokenAcc    map[wokenKey]*sampleAcc
	wakerStacks map[string]string
	// tl, when not nil, records each thread's timeline (see critical.go).
	tl *timeline
}

func newBuilder() *builder {
	return &builder{
		Builder:  build.New[funcKey, string](nil),
		eventIdx: map[string]int{},
		samples:  map[string]*sampleAcc{},
		locs:     map[string]*profile.Location{},
		byAddr:   map[uint64][]addrLocation{},
	}
}

func (b *builder) warn(w string) {
	b.nwarn++
	if b.nwarn <= maxWarnings {
		b.warnings = append(b.warnings, w)
	}
}

// add records one sample: its header and its frames, leaf first.
func (b *builder) add(h *header, frames []frameLine) error {
	ei, value := b.count(h)
	if ei >= MaxEvents {
		b.ignored++
		return nil
	}
	java := strings.ReplaceAll(h.comm, " ", "_") == "java"
	locs := b.locBuf[:0]
	var inlined []frameLine
	for i := range frames {
		f := &frames[i]
		switch {
		case f.dso == "inlined":
			inlined = append(inlined, *f)
			continue
		case strings.HasPrefix(f.sym, "(") && !strings.HasPrefix(f.sym, "(anonymous namespace)"):
			continue // stackcollapse-perf.pl: "skip process names"
		}
		locs = append(locs, b.location(f, inlined, java))
		inlined = inlined[:0]
	}
	if len(inlined) > 0 {
		locs = append(locs, b.location(nil, inlined, java))
	}
	if h.comm != "" {
		locs = append(locs, b.commLocation(h.comm))
	}
	b.locBuf = locs

	// A check of the event's total also bounds every record's sum, and
	// any sum a consumer makes of the event's values.
	ev := b.events[ei]
	if ev.total > math.MaxInt64-value {
		return fmt.Errorf("the periods of event %s add up to more than a 64-bit integer holds (%d + %d)", ev.name, ev.total, value)
	}
	ev.total += value
	var sw switchFields
	var st switchState
	if h.event == schedSwitch {
		sw = parseSwitchFields(h.fields)
		st = schedState(sw.state)
	}
	acc := b.sample(h, locs, st)
	acc.add(ei, value)
	switch {
	case h.event == schedSwitch && h.hasTime:
		return b.offCPUSwitch(h, sw, acc, ei, value, st == stateDead)
	case wakeEvent(h.event) && h.hasTime:
		b.waking(h, locs)
	}
	return nil
}

// add adds one header's value of event ei to the record.
func (acc *sampleAcc) add(ei int, value int64) {
	j, found := slices.BinarySearchFunc(acc.vals, ei, func(e eventValue, ei int) int { return cmp.Compare(e.ei, ei) })
	if !found {
		acc.vals = slices.Insert(acc.vals, j, eventValue{ei: ei})
	}
	acc.vals[j].v += value
	acc.vals[j].n++
}

// offCPUSwitch notes a sched_switch sample: the switch-in of next_pid and
// the switch-out of prev_pid (the header's thread without one). The idle
// task (pid 0, one per CPU) is never followed.
func (b *builder) offCPUSwitch(h *header, sw switchFields, acc *sampleAcc, ei int, value int64, dead bool) error {
	if sw.hasNext && sw.nextPID != 0 {
		if err := b.switchIn(sw.nextPID, h.ns); err != nil {
			return err
		}
	}
	tid := h.tid
	if sw.hasPrev {
		tid = sw.prevPID
		b.off.idleOut = b.off.idleOut || tid == 0
	}
	if !dead && tid != 0 {
		b.switchOut(tid, h, acc, ei, value)
	}
	return nil
}

// count notes one header of an event and returns the event's index and
// the sample's value: its period, or 1.
func (b *builder) count(h *header) (ei int, value int64) {
	ei, ok := b.eventIdx[h.event]
	if !ok {
		ei = len(b.events)
		b.events = append(b.events, &event{name: h.event})
		b.eventIdx[h.event] = ei
	}
	ev := b.events[ei]
	value = 1
	if h.hasPeriod {
		if ev.withPeriod == 0 {
			ev.firstPeriod = h.period
		}
		ev.withPeriod++
		if h.period > 0 { // stackcollapse-perf.pl counts a 0 period as 1
			value = h.period
		}
	} else {
		ev.withoutPer++
	}
	if h.hasTime {
		b.off.noteTime(h.ns)
		if !b.hasTime || h.time < b.minTime {
			b.minTime = h.time
		}
		if !b.hasTime || h.time > b.maxTime {
			b.maxTime = h.time
		}
		b.hasTime = true
	}
	return ei, value
}

// sample returns the accumulator of a stack (leaf first) with the header's
// comm, pid and tid, adding it when new.
// sched_switch records are kept apart from the others and from each other
// by what their prev_state says (st), to be labelled: scheduler latency,
// or the fallback bucket of blocked time.
func (b *builder) sample(h *header, locs []*profile.Location, st switchState) *sampleAcc {
	key := b.key[:0]
	for _, l := range locs {
		key = binary.AppendUvarint(key, l.ID)
	}
	key = append(key, 0)
	key = append(key, h.comm...)
	key = append(key, 0)
	if h.hasPID {
		key = binary.AppendVarint(key, h.pid)
	}
	key = append(key, 0)
	key = binary.AppendVarint(key, h.tid)
	if st != 0 {
		key = append(key, 0, byte(st))
	}
	b.key = key
	acc, ok := b.samples[string(key)]
	if !ok {
		s := &profile.Sample{
			Location: append([]*profile.Location(nil), locs...),
			Label:    map[string][]string{"comm": {h.comm}},
			NumLabel: map[string][]int64{"tid": {h.tid}},
		}
		if h.hasPID {
			s.NumLabel["pid"] = []int64{h.pid}
		}
		acc = &sampleAcc{s: s, state: st}
		b.samples[string(key)] = acc
		b.order = append(b.order, acc)
	}
	return acc
}

// location returns the Location of one frame line (nil when only inlined
// frames are left at the end of a stack) with the inlined frames (dso
// "inlined", leaf first) printed above it.
func (b *builder) location(f *frameLine, inlined []frameLine, java bool) *profile.Location {
	if f != nil && len(inlined) == 0 {
		return b.plainLocation(f, java)
	}
	var addr uint64
	dso, sym := "", ""
	if f != nil {
		addr, dso, sym = f.addr, f.dso, f.sym
	} else {
		addr = inlined[len(inlined)-1].addr
	}
	// The key: the address, dso, symbol, inlined frames and the java
	// flag, built in a buffer that is copied only for a new location.
	kb := binary.LittleEndian.AppendUint64(b.locKey[:0], addr)
	kb = append(kb, dso...)
	kb = append(kb, 0)
	if f != nil {
		kb = append(kb, '=')
		kb = append(kb, sym...)
	}
	for _, in := range inlined {
		kb = append(kb, 0)
		kb = append(kb, in.sym...)
	}
	if java {
		kb = append(kb, "\x00java"...)
	}
	b.locKey = kb
	if l, ok := b.locs[string(kb)]; ok {
		return l
	}
	l := b.newLocation(addr, f, inlined, java)
	b.locs[string(kb)] = l
	return l
}

// plainLocation is location for a frame without inlined frames above it,
// the usual one: filed by its address, then by dso, symbol and the java
// flag, so that a frame seen before costs a lookup of a number and a
// comparison of its strings, not the hash of a long key.
func (b *builder) plainLocation(f *frameLine, java bool) *profile.Location {
	for _, c := range b.byAddr[f.addr] {
		if c.java == java && c.dso == f.dso && c.sym == f.sym {
			return c.loc
		}
	}
	l := b.newLocation(f.addr, f, nil, java)
	b.byAddr[f.addr] = append(b.byAddr[f.addr], addrLocation{f.dso, f.sym, java, l})
	return l
}

// addrLocation is one location filed under its address.
type addrLocation struct {
	dso, sym string
	java     bool
	loc      *profile.Location
}

// newLocation adds the location of frame f (nil when only inlined frames
// are left at the end of a stack) at addr with the inlined frames above
// it.
func (b *builder) newLocation(addr uint64, f *frameLine, inlined []frameLine, java bool) *profile.Location {
	dso, sym := "", ""
	if f != nil {
		dso, sym = f.dso, f.sym
	}
	l := &profile.Location{Address: addr}
	if dso != "" && dso != "[unknown]" {
		l.Mapping = b.Mapping(dso)
	}
	// pprof orders Line innermost first: the inlined frames printed above
	// (leaf first), then the `a->b->c` chain from its end.
	for _, in := range inlined {
		l.Line = append(l.Line, profile.Line{Function: b.function(in.sym, dso, java)})
	}
	if f != nil {
		parts := splitInline(sym)
		for i := len(parts) - 1; i >= 0; i-- {
			l.Line = append(l.Line, profile.Line{Function: b.function(parts[i], dso, java)})
		}
	}
	return b.AddLocation(l)
}

// splitInline splits `outer->inner` inline chains, outermost first, leaving
// C++ `operator->` alone.
func splitInline(sym string) []string {
	if !strings.Contains(sym, "->") {
		return []string{sym}
	}
	const ph = "operator\x00"
	s := strings.ReplaceAll(sym, "operator->", ph)
	parts := strings.Split(s, "->")
	for i := range parts {
		parts[i] = strings.ReplaceAll(parts[i], ph, "operator->")
	}
	return parts
}

// function returns the Function of one symbol as printed (SystemName; ""
// when the frame has none) and tidied (Name).
func (b *builder) function(sym, dso string, java bool) *profile.Function {
	name := TidyName(sym, dso, java)
	return b.Function(funcKey{name, sym, dso}, profile.Function{Name: name, SystemName: sym})
}

func (b *builder) commLocation(comm string) *profile.Location {
	key := "\x00comm\x00" + comm
	if l, ok := b.Location(key); ok {
		return l
	}
	name := strings.ReplaceAll(comm, " ", "_")
	fn := b.Function(funcKey{name, comm, "\x00comm"}, profile.Function{Name: name, SystemName: comm})
	return b.AddLocationAs(key, &profile.Location{Line: []profile.Line{{Function: fn}}})
}

// TidyName turns a perf symbol (offset already removed) into the frame name
// stackcollapse-perf.pl prints, without its `_[k]`/`_[j]` annotations. dso
// names `[unknown]` symbols; java says the sample's comm is "java".
func TidyName(sym, dso string, java bool) string {
	if sym == "[unknown]" || sym == "" {
		if dso == "" || dso == "[unknown]" {
			return "[unknown]"
		}
		base := path.Base(dso)
		if strings.HasPrefix(base, "[") && strings.HasSuffix(base, "]") {
			return base
		}
		return "[" + base + "]"
	}
	f := strings.ReplaceAll(sym, ";", ":")
	if !isGoMethod(f) {
		f = cutParams(f)
	}
	if strings.ContainsAny(f, `"'`) {
		f = quotes.Replace(f)
	}
	if java && strings.Contains(f, "/") {
		f = strings.TrimPrefix(f, "L")
	}
	if strings.TrimSpace(f) == "" {
		return "[unknown]"
	}
	return f
}

// isGoMethod reports whether f holds `.(`, then `).` (goMethodRE, whose
// `.*` spans no newline: a name holding one is left to the regexp).
func isGoMethod(f string) bool {
	if strings.IndexByte(f, '\n') >= 0 {
		return goMethodRE.MatchString(f)
	}
	i := strings.Index(f, ".(")
	return i >= 0 && strings.Contains(f[i+2:], ").")
}

// cutParams drops a C++ (or JVM, .NET) function's parameter list and what
// follows it (` const`, ` [clone .cold]`, a return type): the last
// parenthesized group at depth 0 of parentheses, <>, [] and {} that no `::`
// or `(` follows. So `(anonymous namespace)::f(int)`, a lambda's
// `f()::{lambda(int)#1}::operator()(int) const` and Rust's
// `std::rt::lang_start::<()>::{{closure}}` keep their inner parentheses
// (the first two become `(anonymous namespace)::f` and
// `f()::{lambda(int)#1}::operator()`). The symbols of an operator name
// (`operator()`, `operator<<`) are part of the name. A name whose brackets
// do not balance is cut at its first `(` that does not open `(anonymous
// namespace)`, as stackcollapse-perf.pl does.
func cutParams(f string) string {
	depth, last := 0, -1
	for i := 0; i < len(f); i++ {
		n, d := bracket(f, i)
		if d > 0 && depth == 0 && f[i] == '(' {
			last = i
		}
		if depth += d; depth < 0 {
			return cutFirstParen(f)
		}
		i += n - 1
	}
	if depth != 0 {
		return cutFirstParen(f)
	}
	if last < 0 || strings.HasPrefix(f[last:], "(anonymous namespace)") {
		return f
	}
	close := matchParen(f, last)
	if close < 0 || strings.Contains(f[close:], "::") || strings.ContainsRune(f[close+1:], '(') {
		return f
	}
	return f[:last]
}

// bracket reads f at i: n bytes (more than 1 for a C++ operator name such
// as `operator()` or `operator<<`, and for Rust's `->`, whose symbols are
// no brackets) that open (d 1), close (d -1) or do neither (d 0) a
// bracket: parentheses, <>, [] or {}.
func bracket(f string, i int) (n, d int) {
	if n := operatorLen(f, i); n > 0 {
		return n, 0
	}
	if strings.HasPrefix(f[i:], "->") {
		return 2, 0
	}
	switch f[i] {
	case '(', '<', '[', '{':
		return 1, 1
	case ')', '>', ']', '}':
		return 1, -1
	}
	return 1, 0
}

// operatorLen is the length of a C++ operator name (`operator` and its
// symbols: `operator()`, `operator<<`, `operator->*`) that starts at i,
// or 0.
func operatorLen(f string, i int) int {
	const kw = "operator"
	if !strings.HasPrefix(f[i:], kw) || (i > 0 && isIdent(f[i-1])) {
		return 0
	}
	j := i + len(kw)
	for _, two := range []string{"()", "[]"} {
		if strings.HasPrefix(f[j:], two) {
			return j + 2 - i
		}
	}
	k := j
	for k < len(f) && strings.IndexByte("<>=!+-*/%^&|~,", f[k]) >= 0 {
		k++
	}
	if k == j {
		return 0 // operator new, operator bool: an ordinary name
	}
	return k - i
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// matchParen returns the index of the `)` that closes the `(` at open, or
// -1.
func matchParen(f string, open int) int {
	depth := 0
	for i := open; i < len(f); i++ {
		n, d := bracket(f, i)
		if depth += d; d < 0 && depth == 0 {
			return i
		}
		i += n - 1
	}
	return -1
}

// cutFirstParen drops everything from the first `(` that does not open
// `(anonymous namespace)`.
func cutFirstParen(f string) string {
	for i := 0; i < len(f); i++ {
		if f[i] == '(' && !strings.HasPrefix(f[i:], "(anonymous namespace)") {
			return f[:i]
		}
	}
	return f
}

// IsKernelDSO reports whether a dso is the kernel, as stackcollapse-perf.pl
// decides for its `_[k]` annotation: a bracketed name such as
// `[kernel.kallsyms]` or a path ending in vmlinux, but not `[unknown]`.
func IsKernelDSO(dso string) bool {
	return (strings.HasPrefix(dso, "[") || strings.HasSuffix(dso, "vmlinux")) && !strings.Contains(dso, "unknown")
}

// IsJITDSO reports whether a dso is a perf map of JIT-compiled code
// (`/tmp/perf-PID.map`), stackcollapse-perf.pl's `_[j]` annotation.
func IsJITDSO(dso string) bool { return perfMapRE.MatchString(dso) }

// OnCPUEvent reports whether samples of a perf event measure on-CPU time or
// work (cpu-clock, task-clock, cycles, instructions and other hardware
// counters), as opposed to software and trace events (page faults, context
// switches, sched:sched_switch, block I/O). Modifiers such as `:u` and
// `:ppp` are ignored.
func OnCPUEvent(event string) bool { return perfevent.OnCPU(event) }

// OffCPUEvent reports whether samples of a perf event are taken where a
// thread leaves the CPU (sched:sched_switch and its kin).
func OffCPUEvent(event string) bool { return perfevent.OffCPU(event) }

// countColumn reports whether the profile gets a trailing samples/count
// type: when an event's values are periods (so a value is not a count of
// samples) and no event is itself named "samples".
func (b *builder) countColumn() bool {
	periods := false
	for _, ev := range b.kept() {
		if ev.name == "samples" {
			return false
		}
		periods = periods || ev.withPeriod > 0 || ev.offCPU()
	}
	return periods
}

// OffCPUType is the sample type of off-CPU nanoseconds made from
// sched:sched_switch events.
const OffCPUType = "off-cpu"

// defaultType sets DefaultSampleType, PeriodType and Period from the
// first event that is no wake-up (sched_waking, sched_wakeup), or, when that is off-CPU time and an on-CPU event is kept,
// from the first on-CPU event (a cpu-clock recording with scheduler events
// reads as on-CPU by default; --sample-index off-cpu picks the off-CPU
// time). Off-CPU time alone gets the period type wall/nanoseconds, so that
// its kind is wall-like, also when written out as pprof and read again.
func (b *builder) defaultType(p *profile.Profile) {
	kept := b.kept()
	// Wake-ups only name the wakers of the off-CPU time: a recording that
	// printed one first still reads as its other events by default.
	di := max(slices.IndexFunc(kept, func(ev *event) bool { return !wakeEvent(ev.name) }), 0)
	if kept[di].offCPU() {
		for i, ev := range kept {
			if !ev.offCPU() && OnCPUEvent(ev.name) {
				di = i
				break
			}
		}
	}
	d := kept[di]
	p.DefaultSampleType = p.SampleType[di].Type
	p.PeriodType = &profile.ValueType{Type: d.name, Unit: p.SampleType[di].Unit}
	p.Period = 1
	switch {
	case d.offCPU():
		p.PeriodType = &profile.ValueType{Type: "wall", Unit: "nanoseconds"}
	case d.withPeriod > 0 && d.firstPeriod > 0:
		p.Period = d.firstPeriod
	}
}

// values fills the samples' values and labels the sched_switch records,
// off-CPU time or, without switch-ins, counted switches alike (see
// offCPULabels), those of preempted threads (scheduler latency) after the
// others: profdiff before 2026-12 read a profile whose first sample
// carries LabelBucket as a Go trace, and may read the pprof a newer one
// writes.
func (b *builder) values(p *profile.Profile, counted bool) {
	kept := b.kept()
	n := len(kept)
	var late []*profile.Sample
	for _, acc := range b.order {
		if acc.moved() {
			continue
		}
		v := make([]int64, len(p.SampleType))
		for _, ev := range acc.vals {
			v[ev.ei] = ev.v
			if kept[ev.ei].offCPU() {
				v[ev.ei] = ev.off
			}
			if counted {
				v[n] += ev.n
			}
		}
		acc.s.Value = v
		if acc.state != 0 && offCPULabels(acc) {
			late = append(late, acc.s)
			continue
		}
		p.Sample = append(p.Sample, acc.s)
	}
	p.Sample = append(p.Sample, late...)
}

// moved reports whether every header of the record went to the records
// of its wakers (see builder.woken), which leaves it empty.
func (acc *sampleAcc) moved() bool {
	for _, ev := range acc.vals {
		if ev.n != 0 {
			return false
		}
	}
	return len(acc.vals) > 0
}

// kept returns the events that become sample types.
func (b *builder) kept() []*event { return b.events[:min(len(b.events), MaxEvents)] }

func (b *builder) finish() (*profile.Profile, error) {
	if len(b.order) == 0 {
		return nil, loaderr.Mark(loaderr.Empty, errors.New("perf script: no samples (no event header line found)"))
	}
	if b.ignored > 0 {
		b.warn(fmt.Sprintf("%d event(s) after the first %d ignored (%d sample(s)); record fewer events to read them", len(b.events)-MaxEvents, MaxEvents, b.ignored))
	}
	if err := b.closeOffCPU(); err != nil {
		return nil, err
	}
	p := b.P
	for _, ev := range b.kept() {
		if ev.offCPU() {
			p.SampleType = append(p.SampleType, &profile.ValueType{Type: OffCPUType, Unit: "nanoseconds"})
			continue
		}
		unit := "samples"
		if ev.withPeriod > 0 {
			unit = "count"
			base := ev.name
			if i := strings.IndexByte(base, ':'); i >= 0 {
				base = base[:i]
			}
			if base == "cpu-clock" || base == "task-clock" {
				unit = "nanoseconds"
			}
			if ev.withoutPer > 0 {
				b.warn(fmt.Sprintf("event %s: %d of %d header(s) have no period; counted 1 each", ev.name, ev.withoutPer, ev.withPeriod+ev.withoutPer))
			}
		}
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: ev.name, Unit: unit})
	}
	counted := b.countColumn()
	if counted {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: "samples", Unit: "count"})
	}
	b.defaultType(p)
	b.values(p, counted)
	if b.hasTime {
		switch d := (b.maxTime - b.minTime) * 1e9; {
		case d >= math.MaxInt64:
			b.warn(fmt.Sprintf("time stamps span %.4g s, more nanoseconds than an int64 holds; the duration is left unknown", b.maxTime-b.minTime))
		case d > 0:
			p.DurationNanos = int64(d)
			// The stamps span from the first sample to the last; a
			// time-based event's sample stands for one period more
			// (ten 1 ms cpu-clock samples cover 10 ms, not 9).
			if p.SampleType[0].Unit == "nanoseconds" && p.Period > 1 && p.DurationNanos <= math.MaxInt64-p.Period {
				p.DurationNanos += p.Period
			}
		}
	}
	if b.nwarn > maxWarnings {
		b.warnings = append(b.warnings, fmt.Sprintf("%d more warning(s)", b.nwarn-maxWarnings))
	}
	return p, nil
}
