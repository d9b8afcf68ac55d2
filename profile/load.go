// Package profile loads profiles from files, standard input and live
// /debug/pprof URLs into the shared data model, *pprofile.Profile
// (github.com/google/pprof/profile).
//
// The format is detected from the content, never from the file name.
// Containers are layers in front of any format: up to two gzip layers and a
// zip archive holding one file (Loaded.Containers). Formats are a registry
// (Formats lists it in the order it is tried): Go execution traces (read by
// package gotrace into goroutine time) and .NET EventPipe traces (package
// nettrace) by their magic, OpenTelemetry profiles (package otlp) by their
// top-level protobuf fields or first JSON key; then pprof protobuf and the legacy formats pprof
// reads (gperftools CPU, `--- contention ---`, heap and thread text, Java);
// then, on the decoded text, speedscope JSON (package speedscope) and
// `perf script` text (package perfscript); formats profdiff recognizes but
// does not read (JFR, perf.data, Chrome JSON, ...) fail naming them; folded
// stacks are the last resort. Sources that are no profile say what they
// are: an HTML page (the /debug/pprof/ index names the profile URLs under
// it), JSON by its shape (describeJSON), a goroutine dump, and a missing
// file named like a URL without its scheme (GuessURL).
//
// Real writers bend the rules; where the meaning is still unambiguous
// (function or location messages without ids, a missing period, a `.gz`
// name on an uncompressed file) the profile loads with a warning, and so
// does one whose duration or period cannot be true, without them
// (CheckTiming). Anything
// else fails with an *Error that names the source, says what is wrong and
// wraps one of the sentinels ErrUnrecognized, ErrUnsupported, ErrCorrupt,
// ErrEmpty or ErrTooLarge, so that callers decide with errors.Is and never
// by an error's text. Errors name no command-line flags: a command adds its
// own hints (how to raise the size limit, say).
//
// Memory is bounded by the input: what a source holds and what each
// container expands to are limited by Options.MaxSize as the bytes arrive
// (see ReadLimited, Decompress): a stream past the limit fails having held
// at most the limit, a size a header announces is believed only as far as
// the data bears it out, and text is parsed in place, so loading a profile
// peaks at about its decompressed size plus the model built from it. Every loaded profile's
// values are non-negative and each sample type's sum fits in an int64 (a
// diff profile, labelled pprof::base, is refused as such).
//
// Readers pass what they know beyond frame names to the classifier in
// sample labels (LabelBucket, LabelState, LabelReason, LabelProfiler,
// LabelThread); DetectKind reads sample and period types, and those labels,
// so that kind detection needs no format package.
package profile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/fleet"
	"github.com/profdiff/profdiff/profile/inflate"
	"github.com/profdiff/profdiff/profile/internal/bounded"
	"github.com/profdiff/profdiff/profile/internal/loaderr"
	"github.com/profdiff/profdiff/profile/internal/redirect"
	"github.com/profdiff/profdiff/symbolize"
)

// DefaultMaxSize is the largest profile, after decompression, that Load
// accepts unless Options.MaxSize says otherwise: 1 GiB. A source past it
// fails with the process at 1.21 GB at most (a gzip bomb), within the 1.5
// times the limit that keeps it the default.
const DefaultMaxSize = 1 << 30

// Options control loading. The zero value is usable.
type Options struct {
	// MaxSize bounds the bytes read and the bytes a gzip stream may expand
	// to (0 means DefaultMaxSize).
	MaxSize int64
	// AllowEmpty loads a well-formed profile that has no samples (a mutex
	// profile of a program without contention), with a warning saying so,
	// instead of failing with ErrEmpty: one side of a comparison may have
	// recorded nothing. Input that is no profile at all still fails.
	AllowEmpty bool
	// KeepProfiler keeps samples of the profiler's own goroutines (fgprof,
	// the runtime/pprof writer), which are dropped by default.
	KeepProfiler bool
	// Stdin is read for the source "-" (nil means os.Stdin).
	Stdin io.Reader
	// HTTPClient fetches URL sources (nil means a client with a timeout
	// derived from the URL's seconds= parameter). Whichever client, Load
	// follows at most MaxRedirects redirects, each checked by CheckURL.
	HTTPClient *http.Client
	// CheckURL, when set, vets a URL source and every address it
	// redirects to before it is requested; its error stops the fetch and
	// is part of the message (a command refuses non-loopback hosts so).
	CheckURL func(*url.URL) error
	// DropGoTypeArgs removes Go generic functions' type arguments from
	// every name (see DropGoTypeArgs): set when one side of a comparison
	// comes from Pyroscope, which drops them.
	DropGoTypeArgs bool
	// Getenv reads fleet sources' credentials (nil: os.Getenv; see
	// package fleet).
	Getenv func(string) string
	// Symbols says where symbol files are found for locations that have
	// an address and no name (see package symbolize; symbols.go). The
	// zero value still tries each mapping's own file, where it exists.
	Symbols symbolize.Options
}

// MaxRedirects is how many redirects a URL source may take.
const MaxRedirects = redirect.Max

// MaxSeconds bounds a URL's seconds= parameter (24 hours), which sets the
// fetch's timeout: no profile is taken for longer, and a larger number
// would overflow the timeout.
const MaxSeconds = 24 * 60 * 60

// Loaded is one loaded profile with what was learned while loading it.
type Loaded struct {
	Source string // as given by the user: a path, "-" or a URL (its password redacted: RedactURL)
	Format Format // what the content is, whatever it was wrapped in
	// Containers lists the layers unwrapped to reach the profile, outermost
	// first ("gzip", "zip"); a container never changes Format.
	Containers []string
	Kind       Kind              // detected kind (see DetectKind)
	Profile    *pprofile.Profile // valid per CheckValid
	// Dropped counts the sample records of the profiler's own goroutines
	// that were dropped. It is not among Warnings: a caller reading many
	// profiles reports the drops of all of them at once, with how to keep
	// them.
	Dropped int64
	// Warnings says what was read leniently, each already prefixed with
	// the source and given once (a problem repeated within the profile is
	// counted in one warning).
	Warnings []string
	// GoVersion is the profiled program's Go version when known ("go1.22.3";
	// capture manifests record it), for the comparability checks.
	GoVersion string
	// Symbols is what symbolization did (which file served which
	// mapping, what stayed unnamed), nil when the profile had no
	// address-only location.
	Symbols *symbolize.Report
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
	maxSize := maxSizeOf(opts)
	data, stripped, err := readStripped(ctx, source, maxSize, opts)
	name := RedactURL(source) // what the profile is called from here on
	if err != nil {
		return nil, &Error{name, err}
	}
	l, err := parse(name, data, maxSize, false, true, stripped) // data is Load's own
	return loaded(l, err, opts)
}

func maxSizeOf(opts Options) int64 {
	if opts.MaxSize <= 0 {
		return DefaultMaxSize
	}
	return opts.MaxSize
}

// loaded is the end of Load for what parse returned: an empty profile
// allowed or refused, symbolization, and the profiler's samples dropped.
func loaded(l *Loaded, err error, opts Options) (*Loaded, error) {
	switch {
	case err != nil && opts.AllowEmpty && errors.Is(err, ErrEmpty) && l != nil && l.Profile != nil:
		// A well-formed profile that recorded nothing: loaded, and said.
		l.Warnings = append(l.Warnings, err.Error())
	case err != nil:
		return nil, err
	}
	if fleet.IsSource(l.Source) {
		applyFleet(l)
	}
	if opts.DropGoTypeArgs {
		DropGoTypeArgs(l.Profile)
	}
	symbolizeLoaded(l, opts.Symbols)
	if !opts.KeepProfiler {
		had := len(l.Profile.Sample)
		l.Dropped = DropProfilerSamples(l.Profile)
		if had > 0 && len(l.Profile.Sample) == 0 {
			err := &Error{l.Source, mark(ErrEmpty, mark(ErrProfilerOnly, fmt.Errorf("every sample (%d) is of the profiler's own goroutines, which are dropped unless kept", had)))}
			if !opts.AllowEmpty {
				return nil, err
			}
			l.Warnings = append(l.Warnings, err.Error())
		}
	}
	return l, nil
}

// Raw is a source read and unwrapped down to protobuf bytes that no
// registry reader claims: what pprof's decoder would read next. It is the
// hook of package diff's streaming decoder, which reads such bytes
// straight into its own index instead of building a *pprofile.Profile;
// for anything that decoder does not take as it is (a malformed or
// unusual profile, address-only locations to symbolize), Load finishes
// the job exactly as the package-level Load would have.
type Raw struct {
	Source     string
	Data       []byte   // the protobuf, decompressed; owned by the Raw, never modified
	Containers []string // the layers unwrapped, outermost first (Loaded.Containers)
	Warnings   []string // said while unwrapping (a .gz name on plain data)
	Options    Options  // the options it was read with

	l  *Loaded
	in *input
}

// LoadRaw reads source as Load does. When the content, once unwrapped, is
// a protobuf that no registry reader claims (pprof's format, or a
// malformed file that pprof's decoder is the one to judge) it returns a
// Raw and a nil *Loaded; any other content it loads and returns as Load
// would, with a nil *Raw.
func LoadRaw(ctx context.Context, source string, opts Options) (*Raw, *Loaded, error) {
	if fleet.IsSource(source) || opts.DropGoTypeArgs {
		// A fleet answer takes its query's window as its duration, and
		// names lose Go type arguments: both are done on the model.
		l, err := Load(ctx, source, opts)
		return nil, l, err
	}
	maxSize := maxSizeOf(opts)
	data, stripped, err := readStripped(ctx, source, maxSize, opts)
	name := RedactURL(source) // what the profile is called from here on
	if err != nil {
		return nil, nil, &Error{name, err}
	}
	var r *Raw
	l, err := guardParse(name, func() (*Loaded, error) {
		l, in, done, err := unwrap(name, data, maxSize, false, true, stripped)
		switch {
		case done || err != nil:
			return l, err
		case len(in.data) > 0 && in.data[0] >= 1<<3 && protoStart(in.data):
			r = &Raw{Source: name, Data: in.data, Containers: l.Containers, Warnings: l.Warnings, Options: opts, l: l, in: in}
			return nil, nil
		}
		return l.parsePprofOrText(in)
	})
	if r != nil {
		return r, nil, nil
	}
	l, err = loaded(l, err, opts)
	return nil, l, err
}

// readStripped reads source within maxSize. A gzipped regular file is
// inflated as it is read, its compressed bytes mapped rather than copied
// onto the heap (see gunzipFile), and stripped says that data is its
// first layer's content; anything else is read as it is (readSource),
// stripped 0.
func readStripped(ctx context.Context, source string, maxSize int64, opts Options) (data []byte, stripped int, err error) {
	if data, ok, err := gunzipFile(source, maxSize); ok {
		if err != nil || !isGzip(data) {
			return data, 1, err
		}
		// A gzip inside: read the file again, both layers as one stream
		// (see gunzipTwice).
		n := len(data)
		data = nil
		bounded.DropLarge(int64(n))
		data, err = gunzipFileTwice(source, maxSize)
		return data, 2, err
	}
	data, err = readSource(ctx, source, maxSize, opts)
	return data, 0, err
}

// gunzipFile is gunzip for a gzipped regular file: package inflate reads
// it mapped (inflate.GunzipFile), so its compressed bytes are never
// copied onto the heap, and a file it does not take is streamed from the
// file by the reader that words what is wrong (gunzipStream). It reports
// false for anything else (stdin, a URL, a fleet source, a named pipe or
// other file that is not regular, a file that is not gzip or larger than
// maxSize), which readSource then reads, so errors are worded as they
// always are.
func gunzipFile(source string, maxSize int64) ([]byte, bool, error) {
	if source == "-" || strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") || fleet.IsSource(source) {
		return nil, false, nil
	}
	// Stat before opening: opening a named pipe would meet its writer, and
	// its data would be lost to the read that follows.
	if st, err := os.Stat(source); err != nil || !st.Mode().IsRegular() {
		return nil, false, nil
	}
	f, err := os.Open(source)
	if err != nil {
		return nil, false, nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxSize || st.Size() < 18 {
		return nil, false, nil
	}
	var head [2]byte
	if _, err := f.ReadAt(head[:], 0); err != nil || !isGzip(head[:]) {
		return nil, false, nil
	}
	if out, err := inflate.GunzipFile(f, st.Size(), maxSize); err == nil {
		return out, true, nil
	}
	var tail [4]byte // ISIZE (see gzipSize): the streaming reader's size hint
	if _, err := f.ReadAt(tail[:], st.Size()-4); err != nil {
		return nil, false, nil
	}
	out, err := gunzipStream(bufio.NewReaderSize(f, 1<<16), maxSize, st.Size(), int64(binary.LittleEndian.Uint32(tail[:])))
	return out, true, err
}

// gunzipFileTwice is gunzipTwice of the file source.
func gunzipFileTwice(source string, maxSize int64) ([]byte, error) {
	f, err := os.Open(source)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	return gunzipTwice(bufio.NewReaderSize(f, 1<<16), maxSize, size)
}

// IsProfilerFrame reports whether a function name is one that only the
// profiler's own goroutines run (see DropProfilerSamples), so that a
// reader of Raw drops the same samples Load does.
func IsProfilerFrame(name string) bool {
	// Every alternative of the expression starts with one of these: most
	// names are ruled out without running it.
	if !strings.HasPrefix(name, "runtime") && !strings.HasPrefix(name, "net/http/pprof.") && !strings.HasPrefix(name, "github.com/felixge/fgprof.") {
		return false
	}
	return profilerFrame.MatchString(name)
}

// Load parses r's bytes with pprof's decoder and finishes as Load would
// have: the same model, checks, warnings and errors.
func (r *Raw) Load() (*Loaded, error) {
	return r.LoadPlaced(nil)
}

// LoadPlaced is Load with place (nil: none), which says where a decoder
// of pprof's protobuf other than the pprof library's stops on r ("at byte
// 162: bad varint in a sample's values"; "" for nowhere). It is asked
// only where the library refuses r's protobuf below its top level, where
// neither its decoder nor the framing names a place; the error then says
// that place, then the library's words. Package pull's Load passes its
// decoder's.
func (r *Raw) LoadPlaced(place func(*Raw) string) (*Loaded, error) {
	in := *r.in
	if place != nil {
		in.place = func() string { return place(r) }
	}
	l, err := guardParse(r.Source, func() (*Loaded, error) {
		return r.l.parsePprofOrText(&in)
	})
	return loaded(l, err, r.Options)
}

// Parse detects the format of data and parses it. Source names the data in
// errors and warnings; maxSize bounds what containers expand to (0 means
// DefaultMaxSize). A Go execution trace becomes a profile of goroutine
// time (see package gotrace) of kind KindTrace. Formats profdiff does not
// read (Chrome and other JSON profiles, JFR, ...) are recognized and named
// in an "unknown format" error (ErrUnsupported) rather than half-read as
// folded stacks.
// Any panic inside a third-party parser is turned into an error: bad input
// must never crash the program. Parse does not modify data.
func Parse(source string, data []byte, maxSize int64) (*Loaded, error) {
	l, err := parse(source, data, maxSize, false, false, 0)
	if err != nil {
		return nil, err // an empty profile comes with ErrEmpty for Load alone
	}
	return l, nil
}

// parse is Parse; inZip is set inside a zip archive's member, which is not
// unpacked again. owned says that nothing else holds data or will modify
// it, so that its text may be read in place rather than copied (a
// decompressed layer is always owned). stripped is how many gzip layers
// were removed from data already (readStripped). It strips the containers, then
// tries the registry's binary readers, pprof, the registry's text readers,
// the formats profdiff recognizes but does not read, and folded stacks, in
// that order.
func parse(source string, data []byte, maxSize int64, inZip, owned bool, stripped int) (l *Loaded, err error) {
	return guardParse(source, func() (*Loaded, error) {
		l, in, done, err := unwrap(source, data, maxSize, inZip, owned, stripped)
		if done || err != nil {
			return l, err
		}
		return l.parsePprofOrText(in)
	})
}

// guardParse runs a parser, turning any panic inside it (a third-party
// parser's) into an error: bad input must never crash the program.
func guardParse(source string, f func() (*Loaded, error)) (l *Loaded, err error) {
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, &Error{source, mark(ErrCorrupt, fmt.Errorf("corrupt profile (parser failed: %v)", r))}
		}
	}()
	return f()
}

// unwrap is the start of parse: it strips the containers and runs the
// registry's binary readers. done says that it read the profile (l, err)
// already; else in holds what pprof's decoders and the text readers read.
// stripped is how many gzip layers were removed from data already.
func unwrap(source string, data []byte, maxSize int64, inZip, owned bool, stripped int) (l *Loaded, in *input, done bool, err error) {
	var gzipped bool
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	l = &Loaded{Source: source}
	if stripped == 0 && len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, true, &Error{source, mark(ErrEmpty, errors.New("empty file"))}
	}
	data, gzipped, err = l.ungzipLayers(data, maxSize, stripped)
	if err != nil {
		return nil, nil, true, &Error{source, err}
	}
	owned = owned || gzipped
	if !gzipped && strings.HasSuffix(source, ".gz") {
		l.Warnings = append(l.Warnings, source+": named .gz but not gzip-compressed; read as is")
	}
	if isZip(data) && !inZip {
		l, err = l.parseZip(data, maxSize)
		return l, nil, true, inGunzipped(err, gzipped)
	}
	in = &input{data: data, owned: owned, gzipped: gzipped}
	if r := sniff(in, false); r != nil {
		l, err = r.load(l, in)
		return l, nil, true, err
	}
	return l, in, false, nil
}

// inGunzipped says that the places a broken profile's error names count in
// its gunzipped data, where it was gzipped: the message reads "SOURCE: in
// the gunzipped data: ...", as a zip member's reads "in zip member NAME:
// ...". The loader gives it the errors of readers that name places (the
// registry's, pprof's protobuf and legacy CPU decoding), not pprof's checks
// of a decoded profile, which name samples; errors of the gzip layer
// itself, and of other kinds, are as they are.
func inGunzipped(err error, gzipped bool) error {
	var pe *Error
	if gzipped && errors.Is(err, ErrCorrupt) && errors.As(err, &pe) {
		pe.Err = fmt.Errorf("in the gunzipped data: %w", pe.Err)
	}
	return err
}

// FormatSize prints a byte count the way ParseSize reads it.
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
		return ReadLimited(in, maxSize)
	case strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://"):
		return fetch(ctx, source, maxSize, opts)
	case fleet.IsSource(source):
		return fetchFleet(ctx, source, maxSize, opts)
	}
	f, err := os.Open(source)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if u := GuessURL(source); u != "" && errors.Is(err, fs.ErrNotExist) {
			return nil, &hintError{"not a file; did you mean " + u + "?", err}
		}
		return nil, err
	}
	defer f.Close()
	var size int64 // what a regular file should hold, the buffer's size
	if st, err := f.Stat(); err == nil {
		if st.IsDir() {
			return nil, errors.New("is a directory, not a profile")
		}
		if st.Mode().IsRegular() {
			size = st.Size()
		}
	}
	return readSized(f, maxSize, size, true)
}

// fetch GETs a /debug/pprof endpoint. The timeout covers the profile's own
// duration (the seconds= parameter) plus 30 s for transfer.
func fetch(ctx context.Context, source string, maxSize int64, opts Options) ([]byte, error) {
	u, err := url.Parse(source)
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %v", err)
	}
	if opts.CheckURL != nil {
		if err := opts.CheckURL(u); err != nil {
			return nil, err
		}
	}
	timeout := 30 * time.Second
	if s := u.Query().Get("seconds"); s != "" {
		// Not a number, or not positive: the server says what it makes
		// of it.
		switch secs, err := strconv.ParseInt(s, 10, 64); {
		case errors.Is(err, strconv.ErrRange) || err == nil && secs > MaxSeconds:
			return nil, fmt.Errorf("seconds=%s is out of range: a profile takes at most 24 hours (%d seconds)", truncate(s, 30), MaxSeconds)
		case err == nil && secs > 0:
			timeout += time.Duration(secs) * time.Second
		}
	}
	said := time.Duration(0) // the timeout a failure can name: unknown with the caller's client
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: timeout}
		said = timeout
	}
	client = redirect.Bound(client, opts.CheckURL)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fetchError(err, said)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if msg := statusBody(string(body)); msg != "" {
			return nil, fmt.Errorf("HTTP %s: %s", resp.Status, msg)
		}
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	return readSized(resp.Body, maxSize, max(resp.ContentLength, 0), false)
}

// fetchError words a failed request without repeating the URL (the
// *Error names the source already) and says a timeout's length when known
// (timeout > 0).
func fetchError(err error, timeout time.Duration) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		switch {
		case (ue.Timeout() || errors.Is(err, context.DeadlineExceeded)) && timeout > 0:
			return fmt.Errorf("fetching profile: no complete answer within %v: %w", timeout, ue.Err)
		case ue.Timeout():
			return fmt.Errorf("fetching profile: no complete answer in time: %w", ue.Err)
		}
		return fmt.Errorf("fetching profile: %w", ue.Err)
	}
	return fmt.Errorf("fetching profile: %w", err)
}

// statusBody is what an error response's body says, on one line: its first
// line, or an HTML page's title (proxies answer with pages whose first
// line is markup); at most 200 bytes, escaped where the command prints it (loaderr.Body).
func statusBody(body string) string {
	if htmlStart.MatchString(body) {
		if _, t, ok := strings.Cut(body, "<title>"); ok {
			t, _, _ = strings.Cut(t, "</title>")
			return loaderr.Body(t, 200)
		}
		return ""
	}
	first, _, _ := strings.Cut(body, "\n")
	return loaderr.Body(first, 200)
}
