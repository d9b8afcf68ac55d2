// Package source is the one loader of profdiff's commands: Load resolves
// the profile arguments of a command's sides (files, globs, "-" for
// standard input, http(s) URLs, capture folders, fleet queries) and reads
// them with package profile, several at once, handing each to the caller
// in order.
//
// Resolution: a pattern expands to its sorted matches; a capture folder
// becomes its profile of Options.Kind (by default wall when every folder
// given has one, else cpu); a fleet query splits into its windows; a URL
// or fleet server must be loopback unless Options.AllowRemote. A profile
// read from a capture folder gets the Go version its manifest records
// (profile.Loaded.GoVersion), and when any source is a Pyroscope query
// every profile drops Go generics' type arguments, as Pyroscope does.
//
// Loading: up to Options.Parallel sources (GOMAXPROCS by default) are
// read and decompressed at once, each followed by the caller's prepare
// step in the same goroutine, and handed to add in side and argument
// order, one at a time; at most Parallel+1 are held, so memory does not
// grow with their number. The first error, or the end of the context,
// stops the loading and is returned.
//
// Errors are the profile package's load errors (test with errors.Is:
// profile.ErrTooLarge and the rest), an *ArgError for an argument that
// names no source, or the caller's own. Nothing here prints or names a
// command's flags: a command adds its hints to the errors, and prints the
// Warnings Load returns.
package source

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
)

// Side is one side's profile arguments as the user gave them.
type Side struct {
	// Name is how errors name the side: the flag or placeholder it came
	// from ("--base", "BASE"), "" for none.
	Name string
	Args []string
}

// Options control Load. The zero value resolves and loads with the
// profile package's defaults.
type Options struct {
	// Load is how each source is read.
	Load profile.Options
	// Kind is which profile a capture folder stands for ("cpu", "wall",
	// ..., or capture.PerfKind); "" picks wall when every capture folder
	// given has one, else cpu.
	Kind string
	// PerRun allows one pattern to match several capture folders (one
	// folder per run). Otherwise a pattern naming a capture folder must
	// match exactly one, so that a glob such as
	// 'profdiff-out/*-demo/baseline' cannot silently merge two runs.
	PerRun bool
	// AllowRemote lets URLs and fleet sources name hosts other than
	// loopback.
	AllowRemote bool
	// Now is the clock relative fleet times (now-1h) are read against
	// (zero: the time of the call, rounded up to a second).
	Now time.Time
	// Raw hands a source whose content is a pprof protobuf to prepare
	// unparsed (Item.Raw), for a caller that decodes it itself; otherwise
	// every source reaches prepare and add as a profile model
	// (Item.Loaded).
	Raw bool
	// Parallel is how many sources are read at once (0: GOMAXPROCS).
	Parallel int
	// Resolved, when set, is called once the arguments are resolved and
	// before any source is read, with the sources of each side: a caller
	// sizes its work by them. Its error is Load's.
	Resolved func(sources [][]string) error
	// Wait, when set, is called after the last add, for work the caller
	// still does in the background on what it was handed (walks of
	// streamed profiles); its error is Load's. A collection follows it:
	// see Load.
	Wait func() error
}

// Item is one source as Load hands it on.
type Item struct {
	Side   int    // the index of its side in Load's sides
	Source string // as resolved: a path, "-", a URL or a fleet source
	// Raw is the source's pprof protobuf, unparsed, with Options.Raw
	// when the content is pprof; nil otherwise.
	Raw *profile.Raw
	// Loaded is the loaded profile, or, once prepare has read a Raw, what
	// prepare made of it (see Load).
	Loaded *profile.Loaded
}

// errNotLoaded is a prepare step that left an item without its Loaded.
var errNotLoaded = errors.New("source: prepare left Item.Loaded nil")

// Load resolves the sides' arguments and loads their sources. Each source
// is read (profile.LoadRaw) and then prepared by prepare in a worker
// goroutine, several at once (Options.Parallel); each item and what
// prepare made of it are then handed to add in order (every source of
// side 0, then side 1, ..., each side's in argument order), one at a
// time, on the goroutine that called Load. When prepare is nil, T is its
// zero value and a Raw is loaded into a model (pull.Load). A prepare that
// turns a Raw into something else sets Item.Loaded to what loading said
// of it (warnings, source, kind), which Load reads: its warnings are
// gathered and a capture folder's Go version is set on it before add.
//
// Load stops at the first error (of resolving, reading, prepare or add)
// or when ctx ends, and returns it; no prepare runs once Load has
// returned. The Warnings are those of the items handed to add, each
// distinct one once, even when Load fails.
//
// Load tunes the runtime for the heap it builds (see README.md, Speed).
// Before reading, where Linux leaves transparent huge pages to the
// program, it has the heap the largest held files will take backed by
// them (package hugeheap; PROFDIFF_HUGEPAGES=off turns it off). After add
// returns, an item whose Loaded holds a profile model with samples is
// garbage unless add kept it, and a collection runs before the next item
// is handed on; after Options.Wait another runs. Both collections keep
// the peak heap near what the caller holds rather than letting a parsed
// profile's garbage pile up to the collector's target.
func Load[T any](ctx context.Context, sides []Side, opts Options, prepare func(*Item) (T, error), add func(*Item, T) error) (Warnings, error) {
	var w warnings
	srcs, err := resolve(sides, opts)
	if err != nil {
		return w.result(), err
	}
	if opts.Resolved != nil {
		if err := opts.Resolved(srcs); err != nil {
			return w.result(), err
		}
	}
	lopts := opts.Load
	lopts.DropGoTypeArgs = lopts.DropGoTypeArgs || pyroscopeSource(srcs)
	var jobs []*job[T]
	for side, ss := range srcs {
		for _, src := range ss {
			jobs = append(jobs, &job[T]{it: Item{Side: side, Source: src}, done: make(chan result[T], 1)})
		}
	}
	par := opts.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	reserveHeap(srcs, par+1)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel() // an error stops what is in flight
		wg.Wait()
	}()
	held := make(chan struct{}, par+1) // read or being read, and not yet added
	reading := make(chan struct{}, par)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, j := range jobs {
			select {
			case held <- struct{}{}:
			case <-ctx.Done():
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case reading <- struct{}{}:
				case <-ctx.Done():
					j.done <- result[T]{err: ctx.Err()}
					return
				}
				v, err := read(ctx, &j.it, lopts, opts.Raw, prepare)
				<-reading
				j.done <- result[T]{v: v, err: err}
			}()
		}
	}()
	versions := captureGoVersions{}
	for _, j := range jobs {
		if err := ctx.Err(); err != nil {
			return w.result(), err // interrupted: the rest is not read
		}
		var r result[T]
		select {
		case r = <-j.done:
		case <-ctx.Done():
			return w.result(), ctx.Err()
		}
		if r.err != nil {
			return w.result(), r.err
		}
		l := j.it.Loaded
		w.add(l)
		if l.GoVersion == "" {
			l.GoVersion = versions.of(j.it.Source)
		}
		model := l.Profile != nil && len(l.Profile.Sample) > 0 // add may consume it
		err := add(&j.it, r.v)
		j.it = Item{} // what add kept is add's
		<-held
		if err != nil {
			return w.result(), err
		}
		if model {
			runtime.GC()
		}
	}
	if opts.Wait != nil {
		if err := opts.Wait(); err != nil {
			return w.result(), err
		}
		runtime.GC()
	}
	return w.result(), nil
}

// job is one source of Load: its item, and its read's result once done.
type job[T any] struct {
	it   Item
	done chan result[T]
}

type result[T any] struct {
	v   T
	err error
}

// read reads it.Source into it (Raw or Loaded) and prepares it.
func read[T any](ctx context.Context, it *Item, lopts profile.Options, raw bool, prepare func(*Item) (T, error)) (T, error) {
	var v T
	r, l, err := profile.LoadRaw(ctx, it.Source, lopts)
	if err != nil {
		return v, err
	}
	it.Raw, it.Loaded = r, l
	if r != nil && (!raw || prepare == nil) {
		it.Raw = nil
		if it.Loaded, err = pull.Load(r); err != nil {
			return v, err
		}
	}
	if prepare != nil {
		if v, err = prepare(it); err != nil {
			return v, err
		}
	}
	if it.Loaded == nil {
		return v, errNotLoaded
	}
	return v, nil
}
