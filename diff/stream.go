package diff

import (
	"errors"
	"io"

	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
	"github.com/profdiff/profdiff/symbolize"
)

// A pprof protobuf (profile.Raw: the bytes, decompressed) is read by the
// pull reader (package profile/pull) straight into what the Analyzer
// needs, without building a *pprofile.Profile: Prepare opens it (the
// tables and every sample checked as profile's Load would check them,
// safe to run for many profiles at once), and the Analyzer reads its
// records as it classifies them (walkStream), each location resolved to
// methods and frame rules once by the locResolver. Any profile the pull
// reader does not take exactly as pprof's model would read it goes
// through pull.Load instead, so its result, warnings and errors are
// those of the model path. With PrepareOptions.IDsInWalk, the samples'
// location ids are checked by the walk that reads them: a profile
// refused there goes through pull.Load then (Analyzer.settle).

// Input is one profile ready to be added to an Analyzer (AddInput) or a
// gate: the pprof model, or a protobuf the streaming decoder has checked.
type Input struct {
	l *profile.Loaded
	d *pull.File
}

// StreamInput wraps a pprof protobuf the pull reader opened.
func StreamInput(f *pull.File) *Input { return &Input{l: f.Loaded(), d: f} }

// NewInput wraps a loaded profile.
func NewInput(l *profile.Loaded) *Input { return &Input{l: l} }

// Loaded is what loading said of the profile: source, format, kind,
// warnings, profiler samples dropped. For a streamed profile its Profile
// is a header only (sample types, period, duration, comments, mappings),
// with no samples, locations or functions.
func (in *Input) Loaded() *profile.Loaded { return in.l }

// Streamed reports whether the streaming decoder reads the profile
// (until it is added).
func (in *Input) Streamed() bool { return in.d != nil }

// errFallback says that the model path reads the profile.
var errFallback = pull.ErrModel

// Prepare decodes r for the streaming path, or loads it with r.Load when
// the decoder does not take it. It may run for several profiles at once.
func Prepare(r *profile.Raw) (*Input, error) { return PrepareWith(r, PrepareOptions{}) }

// PrepareOptions are PrepareWith's.
type PrepareOptions struct {
	// IDsInWalk leaves the samples' packed location ids out of Prepare's
	// checks (unless they need them), to be checked by the walk, which
	// reads them anyway: one pass less over the samples, for an Analyzer
	// that walks in parallel (Analyzer.WalksInParallel). A profile whose
	// ids pprof refuses is then refused by AddInput or Analyzer.Wait,
	// with the error Prepare gives it. A serial walk checks them first,
	// on the caller's goroutine.
	IDsInWalk bool
	// Names is the memo of function names shared by the profiles of one
	// comparison (see Names); nil gives the profile one of its own.
	Names *Names
	// markEvery is shardPlan.markEvery, for tests that cut finer.
	markEvery int
}

// PrepareWith is Prepare with options.
func PrepareWith(r *profile.Raw, opts PrepareOptions) (*Input, error) {
	d, err := pull.Open(r, pull.Options{IDsInWalk: opts.IDsInWalk, Names: opts.Names, Describe: describeName, MarkEvery: opts.markEvery})
	if err != nil {
		l, err := pull.Load(r)
		if err != nil {
			return nil, err
		}
		return &Input{l: l}, nil
	}
	return &Input{l: d.Loaded(), d: d}, nil
}

// Names is the memo of function names the profiles of one comparison
// share (PrepareOptions.Names): pull.Names, with what the Analyzer's
// resolver makes of each name (describeName) worked out once.
type Names = pull.Names

// fnName is what the Analyzer's resolver makes of a function's name:
// symbolize.SplitModule's module and rest, the rest's normalized name
// (symbolize.Normalize) and closure family. Prepare works them out
// (pull.Options.Describe), for several profiles at once, so that the
// Analyzer's walks do not.
type fnName struct{ mod, rest, key, family string }

// describeName is the pull reader's Describe: a name's fnName.
func describeName(name string) any {
	nm := &fnName{}
	nm.mod, nm.rest = symbolize.SplitModule(name)
	nm.key = symbolize.Normalize(nm.rest)
	nm.family = closureFamily(nm.key)
	return nm
}

// nameOf is what describeName made of a function of the pull reader, or
// makes of it now for a File opened without it (StreamInput).
func nameOf(f *pull.Func) *fnName {
	if nm, ok := f.Ext.(*fnName); ok {
		return nm
	}
	return describeName(f.Name).(*fnName)
}

// walkStream is walk for a decoded protobuf: every sample is read from the
// bytes into one reused record and classified as walk classifies the
// model's, the profiler's own left out as Load leaves them out. It is
// serial: Prepare and add (for ids left to the walk) have checked every
// sample already, so no error is left to meet.
func (a *Analyzer) walkStream(side result.Side, prof int, d *pull.File, idx int, kind profile.Kind) {
	from, to := d.Range()
	_ = a.walkStreamIn(side, prof, d, idx, kind, from, to)
}

// walkStreamIn classifies the records of data[from:to] (see
// pull.File.NewReader). It fails, having classified some, where a packed
// location id check left to it fails (pull.File.IDsLater): an id that
// is no location's, or a varint that does not end within its field; and
// with the cause of Options.Context when it ends.
func (a *Analyzer) walkStreamIn(side result.Side, prof int, d *pull.File, idx int, kind profile.Kind, from, to int) error {
	lr := a.newLocResolverN(d.MaxLocID(), d.Locations(), d.MaxFuncID(), len(d.Funcs()), side)
	lr.src = d
	w := a.newWalker(side, prof, lr, idx, CountColumn(d.Header(), idx), kind)
	rd := d.NewReader(from, to, !w.spellings)
	drop := d.DropsProfiler()
	chk := stop.New(a.opts.Context)
	for {
		if err := chk.Err(); err != nil {
			return err
		}
		rec, err := rd.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		case rec.Profiler && drop:
			continue
		case rec.Packed != nil:
			if err := w.samplePacked(rec); err != nil {
				return err
			}
		default:
			w.sample(rec)
		}
	}
}
