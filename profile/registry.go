package profile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/callgrind"
	"github.com/profdiff/profdiff/profile/chrometrace"
	"github.com/profdiff/profdiff/profile/firefox"
	"github.com/profdiff/profdiff/profile/gotrace"
	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/loaderr"
	"github.com/profdiff/profdiff/profile/jfr"
	"github.com/profdiff/profdiff/profile/nettrace"
	"github.com/profdiff/profdiff/profile/otlp"
	"github.com/profdiff/profdiff/profile/perfscript"
	"github.com/profdiff/profdiff/profile/pstats"
	"github.com/profdiff/profdiff/profile/speedscope"
	"github.com/profdiff/profdiff/profile/stackprof"
	v8 "github.com/profdiff/profdiff/profile/v8"
)

// A reader is one entry of the format registry: a format with a content
// signature, its sniffer and its parser.
type reader struct {
	format Format
	what   string // names the format in messages
	// text readers sniff and parse the decoded text (BOM stripped), and
	// are tried only after pprof's decoders fail; the others sniff the
	// decompressed bytes and are tried before pprof.
	text  bool
	sniff func(in *input) bool
	parse func(in *input) (*pprofile.Profile, []string, error)
	// named is set when every error of parse names the format already;
	// the others are prefixed with what.
	named bool
	kind  Kind // the kind of every profile of the format; "" means DetectKind
}

// input is the content handed to the readers.
type input struct {
	data []byte // after the containers
	// owned says that data is the loader's own buffer, which nothing
	// modifies: text then reads it in place instead of copying it.
	owned bool
	// gzipped says that data was gunzipped: the places errors name count
	// in it (inGunzipped).
	gzipped bool
	// place, when set, says where a pprof protobuf that the pprof
	// library refuses below its top level breaks (Raw.LoadPlaced).
	place     func() string
	text      string // decoded UTF-8 text without BOM, for text readers
	textBytes []byte // text as bytes, made on first use (see bytes)
}

// decode sets in.text from in.data (see decodeText), without the copy
// when in.data is owned and UTF-8 already.
func (in *input) decode() error {
	var err error
	if in.owned {
		in.text, err = decodeOwned(in.data)
	} else {
		in.text, err = decodeText(in.data)
	}
	in.text = strings.TrimPrefix(in.text, "\uFEFF")
	return err
}

// inText says, for the error of a text reader, what its byte offsets
// count in where the text is not the file's bytes as they are: the text
// after a UTF-8 byte-order mark, or the text decoded from UTF-16.
func (in *input) inText(err error) error {
	switch {
	case err == nil:
		return nil
	case bytes.HasPrefix(in.data, []byte{0xFF, 0xFE}), bytes.HasPrefix(in.data, []byte{0xFE, 0xFF}):
		return fmt.Errorf("in its text decoded from UTF-16: %w", err)
	case bytes.HasPrefix(in.data, []byte{0xEF, 0xBB, 0xBF}):
		return fmt.Errorf("counting after its byte-order mark: %w", err)
	}
	return err
}

// bytes returns the text as bytes. They are the text's own memory (a
// string is never modified, and the readers handed them only read), so
// no copy is made.
func (in *input) bytes() []byte {
	if in.textBytes == nil && in.text != "" {
		in.textBytes = unsafe.Slice(unsafe.StringData(in.text), len(in.text))
	}
	return in.textBytes
}

// registry lists the readers of formats with a signature, in the order
// Parse tries them. pprof (whose decoder is its own sniffer) runs between
// the binary and the text readers; folded stacks, which have no signature,
// are the last resort.
var registry = []reader{{
	format: FormatGoTrace,
	what:   "Go execution trace",
	sniff:  func(in *input) bool { return gotrace.Looks(in.data) },
	parse:  parseGoTrace,
	named:  true,
	kind:   KindTrace,
}, {
	format: FormatNettrace,
	what:   ".NET EventPipe trace (.nettrace)",
	sniff:  func(in *input) bool { return nettrace.Looks(in.data) },
	parse:  parseNettrace,
}, {
	format: FormatJFR,
	what:   "Java Flight Recorder recording (.jfr)",
	sniff:  func(in *input) bool { return jfr.Looks(in.data) },
	parse:  parseJFR,
	// Thread time: every thread, whatever it does (the default type;
	// TypeKind gives each event type's own kind).
	kind: KindWall,
}, {
	format: FormatPstats,
	what:   "Python pstats file (cProfile)",
	sniff:  func(in *input) bool { return pstats.Looks(in.data) },
	parse:  parsePstats,
	named:  true,     // "malformed Python pstats file: ..."
	kind:   KindWall, // cProfile measures wall time, waits included
}, {
	format: FormatOTLP,
	what:   "OpenTelemetry profiles (OTLP)",
	// Its protobuf (which starts like pprof's, so it is told apart before
	// pprof's decoder runs) and its JSON, both on the bytes: OTLP JSON is
	// UTF-8.
	sniff: func(in *input) bool { return otlp.Looks(in.data) },
	parse: func(in *input) (*pprofile.Profile, []string, error) { return otlp.Parse(in.data) },
	named: true, // "malformed OTLP profiles: ..."
}, {
	format: FormatSpeedscope,
	what:   "speedscope JSON",
	text:   true,
	// Only a JSON object can be speedscope (the first test of Looks, made
	// here so that other text is not copied).
	sniff: func(in *input) bool {
		head := strings.TrimLeft(strings.TrimPrefix(in.text, "\uFEFF"), " \t\r\n")
		return strings.HasPrefix(head, "{") && speedscope.Looks(in.bytes())
	},
	parse: func(in *input) (*pprofile.Profile, []string, error) { return speedscope.Parse(in.bytes()) },
}, {
	format: FormatChromeTrace,
	what:   "Chrome trace-event JSON",
	text:   true,
	sniff: func(in *input) bool {
		head := strings.TrimLeft(in.text, " \t\r\n")
		return (strings.HasPrefix(head, "{") || strings.HasPrefix(head, "[")) && chrometrace.Looks(in.bytes())
	},
	parse: func(in *input) (*pprofile.Profile, []string, error) { return chrometrace.Parse(in.bytes()) },
}, {
	format: FormatV8,
	what:   "V8 CPU profile (.cpuprofile)",
	text:   true,
	sniff:  func(in *input) bool { return v8.Looks(in.bytes()) },
	parse:  func(in *input) (*pprofile.Profile, []string, error) { return v8.Parse(in.bytes()) },
	named:  true,     // "malformed V8 CPU profile: ..."
	kind:   KindWall, // the JavaScript thread's time, idle included
}, {
	format: FormatCallgrind,
	what:   "callgrind profile",
	text:   true,
	sniff:  func(in *input) bool { return callgrind.Looks(in.text) },
	parse:  func(in *input) (*pprofile.Profile, []string, error) { return callgrind.Parse(in.text) },
	named:  true, // "malformed callgrind profile: ..."
	// kind: DetectKind: cpu (instructions executed), or wall (Xdebug's time)
}, {
	format: FormatStackprof,
	what:   "Ruby stackprof JSON",
	text:   true,
	sniff:  func(in *input) bool { return stackprof.Looks(in.bytes()) },
	parse:  func(in *input) (*pprofile.Profile, []string, error) { return stackprof.Parse(in.bytes()) },
	named:  true, // "malformed stackprof profile: ..."
	// cpu, wall or heap (object mode), from the sample types
}, {
	format: FormatGecko,
	what:   "Gecko profile (Firefox Profiler JSON)",
	text:   true,
	sniff:  func(in *input) bool { return firefox.Looks(in.bytes()) },
	parse:  parseGecko,
	named:  true,     // "malformed Gecko profile: ..."
	kind:   KindWall, // every registered thread, sampled whatever it does
}, {
	format: FormatPerfScript,
	what:   "perf script",
	text:   true,
	sniff:  func(in *input) bool { return perfscript.Looks(in.text) },
	parse:  func(in *input) (*pprofile.Profile, []string, error) { return perfscript.Parse(in.text) },
	named:  true,
}}

// FormatInfo describes one format profdiff reads.
type FormatInfo struct {
	Format      Format
	Description string
	// Record is how it is recorded: one command or API per producer.
	Record []string
	// Kinds are the kinds its profiles can have (Kind values).
	Kinds []Kind
	// Blind says what the format cannot tell, so a comparison built on it
	// cannot either.
	Blind string
}

// formatDoc is what `profdiff formats` and the manual say of a format
// besides its name: FormatInfo's Record, Kinds and Blind.
type formatDoc struct {
	noun   string // how the list of what profdiff reads names it
	record []string
	kinds  []Kind
	blind  string
}

// formatDocs describes every format, keyed by its name. A name no reader
// registers yet ("v8-cpuprofile", "chrome-trace") is described ahead of its
// reader and listed by Formats once the reader is in the registry.
var formatDocs = map[Format]formatDoc{
	FormatGoTrace: {
		noun:   "Go execution traces",
		record: []string{"curl -o x.trace 'http://127.0.0.1:6060/debug/pprof/trace?seconds=5'", "go test -trace x.trace", "runtime/trace.Start"},
		kinds:  []Kind{KindTrace},
		blind:  "stacks exist only at state changes, so running time sits on the stack where the goroutine last resumed; nothing inside cgo or the kernel",
	},
	FormatNettrace: {
		noun:   ".nettrace",
		record: []string{"dotnet-trace collect --profile cpu-sampling -p PID --duration 00:00:30"},
		kinds:  []Kind{KindWall},
		blind:  "native code and a thread blocked in the OS look the same (external samples); the V6 layout of dotnet-trace collect-linux is not read",
	},
	FormatJFR: {
		noun:   "JFR",
		record: []string{"java -XX:StartFlightRecording=filename=app.jfr,settings=profile", "jcmd PID JFR.start", "asprof -d 30 -e cpu --wall 20ms -f app.jfr PID"},
		kinds:  []Kind{KindWall, KindCPU, KindBlock, KindHeap},
		blind:  "the JDK samples at most 5 threads running Java (1 in native code) per period, and a native-method sample cannot tell native work from blocking; waits under the settings' thresholds (10 ms in settings=profile, 20 ms in default) have no event",
	},
	FormatPprof: {
		noun:   "pprof",
		record: []string{"curl -o cpu.pb.gz 'http://127.0.0.1:6060/debug/pprof/profile?seconds=10'", "go test -cpuprofile cpu.pb.gz", "profdiff capture URL --out DIR", "jfrconv -o pprof app.jfr cpu.pb.gz"},
		kinds:  []Kind{KindCPU, KindWall, KindMutex, KindBlock, KindGoroutine, KindHeap},
		blind:  "no timeline and no threads: samples are summed per stack; a CPU profile is on-CPU time only",
	},
	FormatPprofLegacy: {
		noun:   "legacy pprof",
		record: []string{"CPUPROFILE=cpu.prof ./app (gperftools)"},
		kinds:  []Kind{KindCPU, KindMutex, KindHeap, KindGoroutine},
		blind:  "no timeline and no threads; gperftools CPU profiles are on-CPU time only and often address-only (name frames with profdiff symbolize)",
	},
	FormatSpeedscope: {
		noun:   "speedscope JSON",
		record: []string{"py-spy record --format speedscope -o x.json --pid PID", "rbspy record --format speedscope", "dotnet-trace collect -p PID --profile cpu-sampling --format Speedscope"},
		kinds:  []Kind{KindWall, KindUnknown, KindHeap},
		blind:  "no thread states and no block reasons: buckets come from frame names only; the producer decides whether blocked time is in it",
	},
	FormatPerfScript: {
		noun:   "perf script text",
		record: []string{"perf record -g -p PID -- sleep 30 && perf script > perf.txt", "perf record -e sched:sched_switch -g --switch-events -o offcpu.data -- ./prog && perf script -i offcpu.data --show-switch-events > offcpu.txt"},
		kinds:  []Kind{KindCPU, KindWall},
		blind:  "cpu-clock and cycles are on-CPU only (off-CPU time needs sched:sched_switch); stacks stop where frame pointers are missing unless recorded with --call-graph dwarf",
	},
	FormatFolded: {
		noun:   "folded stacks",
		record: []string{"perf script | stackcollapse-perf.pl", "py-spy record -f raw", "asprof -o collapsed"},
		kinds:  []Kind{KindUnknown},
		blind:  "no durations, no threads, no timeline and no unit: counts only, and the kind is unknown",
	},
	"v8-cpuprofile": {
		noun:   "V8 .cpuprofile",
		record: []string{"node --cpu-prof app.js", "Chrome DevTools Performance panel (Save profile)"},
		kinds:  []Kind{KindCPU},
		blind:  "JavaScript on the main thread only: no workers, no thread states, so waiting shows as (idle) or (program) rather than a reason",
	},
	FormatCallgrind: {
		noun:   "callgrind",
		record: []string{"valgrind --tool=callgrind ./prog", "valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes ./prog"},
		kinds:  []Kind{KindCPU, KindWall},
		blind:  "instructions executed, not time: a blocked thread costs nothing (the spin in a lock shows, the wait does not); a call graph, so stacks deeper than caller and callee are estimated (speedscope's even split)",
	},
	FormatPstats: {
		noun:   "Python pstats",
		record: []string{"python3 -m cProfile -o out.prof script.py", "cProfile.Profile().dump_stats(\"out.prof\")"},
		kinds:  []Kind{KindWall},
		blind:  "one level of callers, so stacks are caller;callee pairs; only the thread that enabled the profiler (python3 -m cProfile: the main thread); no thread states: a wait is known only by the function that waits",
	},
	FormatStackprof: {
		noun:   "Ruby stackprof JSON",
		record: []string{"StackProf.run(mode: :wall, raw: true, out: \"x.dump\") { ... }, then stackprof --json x.dump > x.json", "JSON.generate(StackProf.run(mode: :cpu, raw: true) { ... })"},
		kinds:  []Kind{KindCPU, KindWall, KindHeap},
		blind:  "the sampled thread only (the one the timer interrupts, usually the main thread), no thread states: a thread blocked on a Mutex shows as Thread::Mutex#lock or #synchronize; GC samples have no Ruby stack; without raw: true the call tree is rebuilt from caller counts and is approximate",
	},
	FormatGecko: {
		noun:   "Firefox Profiler (Gecko) JSON",
		record: []string{"MOZ_PROFILER_STARTUP=1 MOZ_PROFILER_SHUTDOWN=ff.json firefox-esr --headless --screenshot x.png URL", "profiler.firefox.com: Upload, or Download as .json.gz (the processed format)"},
		kinds:  []Kind{KindWall},
		blind:  "only the threads the profiler was told to sample; native frames are addresses unless Firefox symbolicated them (named here by their library); no thread states beyond the frames' categories (Idle, GC / CC, Network)",
	},
	FormatOTLP: {
		noun:   "OTLP profiles",
		record: []string{"the OpenTelemetry eBPF profiler (as root, sending to a Collector)", "an OpenTelemetry Collector with the profiles signal enabled and the file exporter (format: proto or json)", "Pyroscope's OTLP ingest (what it was sent)"},
		kinds:  []Kind{KindCPU, KindWall, KindHeap, KindUnknown},
		blind:  "no thread states or block reasons (an off-CPU profile is kept apart by its sample type only); trace links are dropped; the signal is in development: only the layout of opentelemetry-proto v1.10.0 (one dictionary per message) is read",
	},
	"chrome-trace": {
		noun:   "Chrome trace events",
		record: []string{"Chrome DevTools Performance panel (Save profile: Trace-*.json)", "node --trace-events-enabled --trace-event-categories v8,node app.js"},
		kinds:  []Kind{KindCPU, KindWall},
		blind:  "only the threads and categories that were enabled; CPU samples only where the trace holds the profiler's ProfileChunk events (DevTools records them, node --trace-events-enabled does not), else the duration events' nesting and wall time",
	},
}

// Formats lists the formats profdiff reads in the order their content is
// tried, for help text, `profdiff formats` and documentation. Containers
// (gzip, zip) may wrap any of them.
func Formats() []FormatInfo {
	var out []FormatInfo
	info := func(f Format, what string) FormatInfo {
		d := formatDocs[f]
		return FormatInfo{Format: f, Description: what, Record: d.record, Kinds: d.kinds, Blind: d.blind}
	}
	add := func(text bool) {
		for _, r := range registry {
			if r.text == text {
				out = append(out, info(r.format, r.what))
			}
		}
	}
	add(false)
	out = append(out, info(FormatPprof, "pprof protobuf (profile.proto)"),
		info(FormatPprofLegacy, "legacy pprof formats (gperftools CPU, contention, heap and thread text, Java)"))
	add(true)
	return append(out, info(FormatFolded, "folded stacks (`a;b;c 42`)"))
}

// ReadsList names the formats profdiff reads, in the order Formats gives
// them, for help text and the error of a format it does not: "Go
// execution traces, .nettrace, …, perf script text and folded stacks".
func ReadsList() string {
	var nouns []string
	for _, f := range Formats() {
		nouns = append(nouns, formatDocs[f.Format].noun)
	}
	last := len(nouns) - 1
	return strings.Join(nouns[:last], ", ") + " and " + nouns[last]
}

// sniff returns the first reader of the given stage (text or not) that
// recognizes in, or nil.
func sniff(in *input, text bool) *reader {
	for i := range registry {
		if r := &registry[i]; r.text == text && r.sniff(in) {
			return r
		}
	}
	return nil
}

// load parses in with r and finishes l: the parser's error or warnings,
// then the checks every profile passes. A parser error that is not marked
// with a kind is ErrCorrupt: the format was recognized.
func (r *reader) load(l *Loaded, in *input) (*Loaded, error) {
	p, warns, err := r.parse(in)
	if err != nil {
		if loaderr.Kind(err) == nil {
			err = mark(ErrCorrupt, err)
		}
		if r.text {
			err = in.inText(err)
		}
		if !r.named {
			err = fmt.Errorf("%s: %w", r.what, err)
		}
		return nil, inGunzipped(&Error{l.Source, err}, in.gzipped)
	}
	l.addWarnings(warns)
	demangleFunctions(p) // native names in every format, as finish does for pprof and folded
	if len(p.Sample) == 0 {
		return nil, &Error{l.Source, mark(ErrEmpty, fmt.Errorf("%s holds no samples", r.what))}
	}
	if err := build.Check(p); err != nil { // CheckValid, faster for the readers' Builder-numbered profiles
		return nil, &Error{l.Source, mark(ErrCorrupt, fmt.Errorf("%s: %v", r.what, err))}
	}
	sums, warns, err := checkValues(p)
	if err != nil {
		return nil, &Error{l.Source, fmt.Errorf("%s: %w", r.what, err)}
	}
	l.addWarnings(warns)
	l.Format = r.format
	l.Kind = r.kind
	if l.Kind == "" {
		l.Kind = DetectKind(p)
	}
	l.Profile = p
	CheckTiming(l, sums)
	return l, nil
}

// parseGoTrace reads a Go execution trace into goroutine time. The samples
// of the profiler's own goroutines are labelled, and Load drops them like
// other profiler samples.
func parseGoTrace(in *input) (*pprofile.Profile, []string, error) {
	p, warns, err := gotrace.Parse(in.data, gotrace.Options{ProfilerFrame: profilerFrame.MatchString})
	if err == nil && len(p.Sample) == 0 {
		err = mark(ErrEmpty, fmt.Errorf("Go execution trace (go %s) holds no goroutine time", gotrace.Version(in.data)))
	}
	return p, warns, err
}

func parseNettrace(in *input) (*pprofile.Profile, []string, error) {
	p, warns, err := nettrace.Parse(in.data)
	switch {
	case errors.Is(err, nettrace.ErrV6):
		err = mark(ErrUnsupported, err)
	case err == nil && len(p.Sample) == 0:
		err = mark(ErrEmpty, errors.New("holds no SampleProfiler ThreadSample events (record with `dotnet-trace collect --profile cpu-sampling`)"))
	}
	return p, warns, err
}

func parseGecko(in *input) (*pprofile.Profile, []string, error) {
	return firefox.Parse(in.bytes())
}

func parseJFR(in *input) (*pprofile.Profile, []string, error) {
	p, warns, err := jfr.Parse(in.data)
	if err == nil && len(p.Sample) == 0 {
		err = mark(ErrEmpty, errors.New("holds no execution, native, monitor, park, sleep, I/O, GC or allocation events (record with `-XX:StartFlightRecording=settings=profile`)"))
	}
	return p, warns, err
}

func parsePstats(in *input) (*pprofile.Profile, []string, error) {
	p, warns, err := pstats.Parse(in.data)
	if errors.Is(err, pstats.ErrProfileModule) {
		err = mark(ErrUnsupported, err)
	}
	return p, warns, err
}

// addWarnings adds a parser's warnings, prefixed with the source.
func (l *Loaded) addWarnings(warns []string) {
	for _, w := range warns {
		l.Warnings = append(l.Warnings, l.Source+": "+w)
	}
}
