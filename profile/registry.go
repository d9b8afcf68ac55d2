package profile

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/gotrace"
	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/loaderr"
	"github.com/profdiff/profdiff/profile/jfr"
	"github.com/profdiff/profdiff/profile/nettrace"
	"github.com/profdiff/profdiff/profile/perfscript"
	"github.com/profdiff/profdiff/profile/speedscope"
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
	owned     bool
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
	format: FormatV8,
	what:   "V8 CPU profile (.cpuprofile)",
	text:   true,
	sniff:  func(in *input) bool { return v8.Looks(in.bytes()) },
	parse:  func(in *input) (*pprofile.Profile, []string, error) { return v8.Parse(in.bytes()) },
	named:  true,     // "malformed V8 CPU profile: ..."
	kind:   KindWall, // the JavaScript thread's time, idle included
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
}

// Formats lists the formats profdiff reads in the order their content is
// tried, for help text and documentation. Containers (gzip, zip) may wrap
// any of them.
func Formats() []FormatInfo {
	var out []FormatInfo
	add := func(text bool) {
		for _, r := range registry {
			if r.text == text {
				out = append(out, FormatInfo{r.format, r.what})
			}
		}
	}
	add(false)
	out = append(out, FormatInfo{FormatPprof, "pprof protobuf (profile.proto)"},
		FormatInfo{FormatPprofLegacy, "legacy pprof formats (gperftools CPU, contention, heap and thread text, Java)"})
	add(true)
	return append(out, FormatInfo{FormatFolded, "folded stacks (`a;b;c 42`)"})
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
		if !r.named {
			err = fmt.Errorf("%s: %w", r.what, err)
		}
		return nil, &Error{l.Source, err}
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

func parseJFR(in *input) (*pprofile.Profile, []string, error) {
	p, warns, err := jfr.Parse(in.data)
	if err == nil && len(p.Sample) == 0 {
		err = mark(ErrEmpty, errors.New("holds no execution, native, monitor, park, sleep, I/O, GC or allocation events (record with `-XX:StartFlightRecording=settings=profile`)"))
	}
	return p, warns, err
}

// addWarnings adds a parser's warnings, prefixed with the source.
func (l *Loaded) addWarnings(warns []string) {
	for _, w := range warns {
		l.Warnings = append(l.Warnings, l.Source+": "+w)
	}
}
