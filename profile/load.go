// Package profile loads profiles from files, standard input and live
// /debug/pprof URLs into the shared data model, *pprofile.Profile
// (github.com/google/pprof/profile).
//
// The format is detected from the content, never from the file name: pprof
// protobuf (gzipped or not), the legacy formats pprof reads (gperftools CPU,
// `--- contention ---`, heap and thread text, Java), folded stacks, Go
// execution traces (read by package gotrace into goroutine time), speedscope
// JSON (package speedscope) and `perf script` text (package perfscript). Real
// writers bend the rules; where the meaning is still unambiguous (function or
// location messages without ids, a missing period, a `.gz` name on an
// uncompressed file) the profile loads with a warning. Anything else fails
// with an error that names the source and says what is wrong.
package profile

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/gotrace"
	"github.com/profdiff/profdiff/profile/nettrace"
	"github.com/profdiff/profdiff/profile/perfscript"
	"github.com/profdiff/profdiff/profile/speedscope"
)

// DefaultMaxSize is the largest profile, after decompression, that Load
// accepts unless Options.MaxSize says otherwise: 1 GiB.
const DefaultMaxSize = 1 << 30

// Options control loading. The zero value is usable.
type Options struct {
	// MaxSize bounds the bytes read and the bytes a gzip stream may expand
	// to (0 means DefaultMaxSize).
	MaxSize int64
	// KeepProfiler keeps samples of the profiler's own goroutines (fgprof,
	// the runtime/pprof writer), which are dropped by default.
	KeepProfiler bool
	// Stdin is read for the source "-" (nil means os.Stdin).
	Stdin io.Reader
	// HTTPClient fetches URL sources (nil means a client with a timeout
	// derived from the URL's seconds= parameter).
	HTTPClient *http.Client
}

// Loaded is one loaded profile with what was learned while loading it.
type Loaded struct {
	Source string // as given by the user: a path, "-" or a URL
	Format Format // what the content is, whatever it was wrapped in
	// Containers lists the layers unwrapped to reach the profile, outermost
	// first ("gzip", "zip"); a container never changes Format.
	Containers []string
	Kind       Kind              // detected kind (see DetectKind)
	Profile    *pprofile.Profile // valid per CheckValid
	Dropped    int64             // profiler-own samples dropped (sample records)
	Warnings   []string          // each already prefixed with the source
}

// Error is a load failure: the source and what is wrong with it.
type Error struct {
	Source string
	Err    error
}

// Error returns "source: problem" on one line.
func (e *Error) Error() string {
	msg := e.Source + ": " + e.Err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		msg = strings.Join(strings.Fields(msg), " ")
	}
	return msg
}
func (e *Error) Unwrap() error { return e.Err }

// Load reads one source: a file path, "-" for standard input, or an http(s)
// URL such as http://127.0.0.1:6060/debug/pprof/profile?seconds=5.
func Load(ctx context.Context, source string, opts Options) (*Loaded, error) {
	maxSize := opts.MaxSize
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	data, err := readSource(ctx, source, maxSize, opts)
	if err != nil {
		return nil, &Error{source, err}
	}
	l, err := Parse(source, data, maxSize)
	if err != nil {
		return nil, err
	}
	if !opts.KeepProfiler {
		if n := DropProfilerSamples(l.Profile); n > 0 {
			l.Dropped = n
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: dropped %d sample(s) of the profiler's own goroutines (--keep-profiler keeps them)", source, n))
		}
	}
	return l, nil
}

// Parse detects the format of data and parses it. Source names the data in
// errors and warnings. A Go execution trace becomes a profile of goroutine
// time (see package gotrace) of kind KindTrace. Formats profdiff does not
// read (Chrome and other JSON profiles, .nettrace, ...) are recognized and
// named in an "unknown format" error rather than half-read as folded stacks.
// Any panic inside a third-party parser is turned into an error: bad input
// must never crash the program.
func Parse(source string, data []byte, maxSize int64) (*Loaded, error) {
	return parse(source, data, maxSize, false)
}

// parse is Parse; inZip is set inside a zip archive's member, which is not
// unpacked again.
func parse(source string, data []byte, maxSize int64, inZip bool) (l *Loaded, err error) {
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, &Error{source, fmt.Errorf("corrupt profile (parser failed: %v)", r)}
		}
	}()
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	fail := func(err error) (*Loaded, error) { return nil, &Error{source, err} }
	l = &Loaded{Source: source}
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(errors.New("empty file"))
	}
	isGzip := func(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }
	gzipped := isGzip(data)
	// A profile gzipped twice (a .pb.gz compressed again in transit) is
	// still a profile; a third layer is not worth reading.
	for layers := 0; layers < 2 && isGzip(data); layers++ {
		l.Containers = append(l.Containers, "gzip")
		data, err = gunzip(data, maxSize)
		if err != nil {
			return fail(err)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return fail(errors.New("empty file (gzip stream holds no data)"))
		}
	}
	if !gzipped && strings.HasSuffix(source, ".gz") {
		l.Warnings = append(l.Warnings, source+": named .gz but not gzip-compressed; read as is")
	}
	if gotrace.Looks(data) {
		return parseGoTrace(source, data, l)
	}
	if nettrace.Looks(data) {
		np, warns, err := nettrace.Parse(data)
		if err == nil && len(np.Sample) == 0 {
			err = errors.New("holds no SampleProfiler ThreadSample events (record with `dotnet-trace collect --profile cpu-sampling`)")
		}
		return foreign(source, FormatNettrace, ".NET EventPipe trace (.nettrace)", np, warns, err, l)
	}
	if isZip(data) && !inZip {
		inner, name, err := unzipSingle(data, maxSize)
		if err != nil {
			return fail(err)
		}
		il, err := parse(source, inner, maxSize, true)
		if err != nil {
			var pe *Error
			if errors.As(err, &pe) {
				pe.Err = fmt.Errorf("in zip member %s: %w", name, pe.Err)
			}
			return nil, err
		}
		il.Warnings = append(l.Warnings, il.Warnings...)
		il.Containers = append(append(l.Containers, "zip"), il.Containers...)
		return il, nil
	}

	// Protobuf first (the common case, parsed once), then pprof's legacy
	// parsers, then folded stacks.
	p, format, perr := parsePprof(source, data, l)
	binary := looksBinary(data)
	switch {
	case perr == nil:
		l.Format = format
	case format == FormatPprof:
		// A well-formed protobuf whose content is inconsistent.
		return fail(perr)
	case binary:
		if what := sniffUnsupportedBinary(data); what != "" {
			return fail(unsupported(what))
		}
		return fail(describeProtoError(perr, data, gzipped))
	default:
		text, terr := decodeText(data)
		// A legacy pprof parser that recognized its format has the last
		// word on what is wrong with the file.
		legacy := strings.HasPrefix(perr.Error(), "legacy pprof profile: ")
		if terr == nil && !legacy {
			text = strings.TrimPrefix(text, "\uFEFF")
			if speedscope.Looks([]byte(text)) {
				sp, warns, err := speedscope.Parse([]byte(text))
				return foreign(source, FormatSpeedscope, "speedscope JSON", sp, warns, err, l)
			}
			if perfscript.Looks(text) {
				pp, warns, err := perfscript.Parse(text)
				return foreign(source, FormatPerfScript, "perf script", pp, warns, err, l)
			}
		}
		if terr == nil {
			if what := sniffUnsupportedText(text); what != "" {
				return fail(unsupported(what))
			}
		}
		fp, warns, ferr := ParseFolded(data)
		if ferr != nil {
			if errors.Is(ferr, errZeroCounts) {
				return fail(errors.New("profile has no samples (every folded stack has count 0)"))
			}
			if legacy {
				return fail(fmt.Errorf("malformed %v", perr))
			}
			return fail(fmt.Errorf("unknown format: not pprof, legacy pprof or folded stacks (%v)", ferr))
		}
		for _, w := range warns {
			l.Warnings = append(l.Warnings, source+": "+w)
		}
		p = fp
		l.Format = FormatFolded
	}
	// The pprof and legacy paths have validated already; this checks what
	// the folded parser built.
	if l.Format == FormatFolded {
		if err := p.CheckValid(); err != nil {
			return fail(fmt.Errorf("malformed profile: %v", err))
		}
	}
	if len(p.Sample) == 0 {
		return fail(errors.New("profile has no samples"))
	}
	if p.Period == 0 && l.Format != FormatFolded {
		l.Warnings = append(l.Warnings, source+": profile has no sampling period")
	}
	l.Kind = DetectKind(p)
	l.Profile = p
	return l, nil
}

// parseGoTrace reads a Go execution trace into goroutine time. The samples
// of the profiler's own goroutines are labelled, and Load drops them like
// other profiler samples.
func parseGoTrace(source string, data []byte, l *Loaded) (*Loaded, error) {
	p, warns, err := gotrace.Parse(data, gotrace.Options{ProfilerFrame: profilerFrame.MatchString})
	if err == nil && len(p.Sample) == 0 {
		err = fmt.Errorf("Go execution trace (go %s) holds no goroutine time", gotrace.Version(data))
	}
	l, err = foreign(source, FormatGoTrace, "Go execution trace", p, warns, err, l)
	if err == nil {
		l.Kind = KindTrace
	}
	return l, err
}

// foreign finishes a profile that a parser of another tool's format built
// (format goes into Loaded.Format, what names the format in errors): the
// parser's error or warnings, then the checks every profile passes.
func foreign(source string, format Format, what string, p *pprofile.Profile, warns []string, err error, l *Loaded) (*Loaded, error) {
	if err != nil {
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(what)) {
			err = fmt.Errorf("%s: %w", what, err)
		}
		return nil, &Error{source, err}
	}
	for _, w := range warns {
		l.Warnings = append(l.Warnings, source+": "+w)
	}
	if len(p.Sample) == 0 {
		return nil, &Error{source, fmt.Errorf("%s holds no samples", what)}
	}
	if err := p.CheckValid(); err != nil {
		return nil, &Error{source, fmt.Errorf("%s: %v", what, err)}
	}
	l.Format = format
	l.Kind = DetectKind(p)
	l.Profile = p
	return l, nil
}

// parsePprof tries the protobuf format, then pprof's legacy formats. The
// format it returns is "pprof" when data is a protobuf (err then says what is
// wrong with its content), "pprof-legacy" when a legacy parser read it, and
// "" when neither did (err then is the protobuf decoder's error, or the
// legacy parser's when that recognized its format but not the content).
func parsePprof(source string, data []byte, l *Loaded) (*pprofile.Profile, Format, error) {
	p, err := pprofile.ParseUncompressed(data)
	if err == nil && len(p.SampleType) == 0 && len(p.Sample) == 0 && len(p.Location) == 0 && len(p.Function) == 0 {
		// Nearly any short byte string decodes as some protobuf; one that
		// holds nothing of a profile is not one.
		err = errors.New("no profile data")
	}
	if err == nil {
		verr := p.CheckValid()
		if verr == nil {
			return p, FormatPprof, nil
		}
		// Some writers leave out Function/Location/Mapping ids and refer to
		// them by position. Numbering them by position is the only reading.
		// (CheckValid reports this as a reserved id 0, or as a sample or
		// line with a nil location or function, depending on what it checks
		// first.)
		if fixed, n := numberMissingIDs(data); n > 0 {
			if p2, err2 := pprofile.ParseUncompressed(fixed); err2 == nil {
				if err2 = p2.CheckValid(); err2 == nil {
					l.Warnings = append(l.Warnings, fmt.Sprintf("%s: %d function/location/mapping message(s) had no id; numbered them by position", source, n))
					return p2, FormatPprof, nil
				}
			}
		}
		return nil, FormatPprof, fmt.Errorf("malformed pprof profile: %v", verr)
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		// ParseData would decompress it again, without the size limit.
		return nil, "", err
	}
	lp, lerr := pprofile.ParseData(data) // the protobuf again, then the legacy parsers
	if lerr == nil {
		return lp, FormatPprofLegacy, nil
	}
	if le := trimPprofErr(lerr); le != "unrecognized profile format" && !strings.Contains(le, "token too long") && !looksBinary(data) {
		return nil, "", fmt.Errorf("legacy pprof profile: %s", le)
	}
	return nil, "", err
}

// looksBinary reports whether data is not text; such data that pprof cannot
// parse is a corrupt or truncated profile, not a folded file.
func looksBinary(data []byte) bool {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return false // UTF-16 text
	}
	n := len(data)
	if n > 4096 {
		n = 4096
	}
	ctrl := 0
	for _, c := range data[:n] {
		if c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t') {
			ctrl++
		}
	}
	return ctrl > 0
}

func trimPprofErr(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "parsing profile: ")
	if strings.Contains(s, "token too long") {
		s = "unrecognized profile format"
	}
	return s
}

// protoStart reports whether data starts with the tag of a field of
// profile.proto's Profile message with its wire type, as every pprof
// protobuf does (Go's writer starts with sample_type, 0x0a).
func protoStart(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	switch data[0] {
	case 0x0a, 0x12, 0x1a, 0x22, 0x2a, 0x32, // sample_type ... string_table
		0x38, 0x40, 0x48, 0x50, 0x5a, 0x60, 0x68, 0x6a, 0x70: // drop_frames ... default_sample_type
		return true
	}
	return false
}

func describeProtoError(err error, data []byte, gzipped bool) error {
	s := trimPprofErr(err)
	switch {
	case protoStart(data):
		return fmt.Errorf("truncated or corrupt pprof data: %s", s)
	case gzipped:
		return fmt.Errorf("unknown format: gzip data that is not a profile (not pprof: %s)", s)
	}
	return fmt.Errorf("unknown binary format (not pprof: %s)", s)
}

// gunzip decompresses data, failing once the output passes maxSize so a gzip
// bomb cannot exhaust memory.
func gunzip(data []byte, maxSize int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("corrupt gzip header: %v", err)
	}
	// Profiles compress about 3-10x; start with that guess.
	buf := bytes.NewBuffer(make([]byte, 0, min(int64(len(data))*4, maxSize)))
	n, err := io.Copy(buf, io.LimitReader(zr, maxSize+1))
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("truncated gzip stream after %d bytes", n)
		}
		return nil, fmt.Errorf("corrupt gzip stream after %d bytes: %v", n, err)
	}
	if n > maxSize {
		return nil, fmt.Errorf("gzip stream expands past the %s limit (raise it with --max-size)", FormatSize(maxSize))
	}
	return buf.Bytes(), nil
}

func isZip(data []byte) bool { return bytes.HasPrefix(data, []byte("PK\x03\x04")) }

// unzipSingle returns the one file of a zip archive (how traces are often
// attached to issues), bounded by maxSize. Folders and macOS resource forks
// do not count as files.
func unzipSingle(data []byte, maxSize int64) ([]byte, string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, "", fmt.Errorf("corrupt zip archive: %v", err)
	}
	var files []*zip.File
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		files = append(files, f)
	}
	if len(files) != 1 {
		names := make([]string, 0, 4)
		for i, f := range files {
			if i == 3 {
				names = append(names, "...")
				break
			}
			names = append(names, f.Name)
		}
		return nil, "", fmt.Errorf("zip archive with %d files (%s): profdiff reads a zip holding exactly one profile; unzip it and name the file", len(files), strings.Join(names, ", "))
	}
	f := files[0]
	rc, err := f.Open()
	if err != nil {
		return nil, f.Name, fmt.Errorf("zip member %s: %v", f.Name, err)
	}
	defer rc.Close()
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(rc, maxSize+1))
	if err != nil {
		return nil, f.Name, fmt.Errorf("zip member %s: corrupt after %d bytes: %v", f.Name, n, err)
	}
	if n > maxSize {
		return nil, f.Name, fmt.Errorf("zip member %s expands past the %s limit (raise it with --max-size)", f.Name, FormatSize(maxSize))
	}
	return buf.Bytes(), f.Name, nil
}

// FormatSize prints a byte count the way --max-size accepts it.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// ParseSize reads a size such as 1GiB, 512MiB, 64KiB, 1G, 100M or 4096.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("invalid size %q (want a positive number with an optional unit: 1GiB, 512MiB, 64KiB)", s)
	}
	return n * mult, nil
}

func readSource(ctx context.Context, source string, maxSize int64, opts Options) ([]byte, error) {
	switch {
	case source == "-":
		in := opts.Stdin
		if in == nil {
			in = os.Stdin
		}
		return readLimited(in, maxSize)
	case strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://"):
		return fetch(ctx, source, maxSize, opts.HTTPClient)
	}
	f, err := os.Open(source)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, errors.New("is a directory, not a profile")
	}
	return readLimited(f, maxSize)
}

func readLimited(r io.Reader, maxSize int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSize+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > maxSize {
		return nil, fmt.Errorf("larger than the %s limit (raise it with --max-size)", FormatSize(maxSize))
	}
	return data, nil
}

// fetch GETs a /debug/pprof endpoint. The timeout covers the profile's own
// duration (the seconds= parameter) plus 30 s for transfer.
func fetch(ctx context.Context, source string, maxSize int64, client *http.Client) ([]byte, error) {
	u, err := url.Parse(source)
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %v", err)
	}
	timeout := 30 * time.Second
	if s := u.Query().Get("seconds"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil && secs > 0 {
			timeout += time.Duration(secs) * time.Second
		}
	}
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching profile: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		msg := strings.TrimSpace(strings.SplitN(string(body), "\n", 2)[0])
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, msg)
	}
	return readLimited(resp.Body, maxSize)
}
