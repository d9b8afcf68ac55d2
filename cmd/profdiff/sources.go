package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/profile/fleet"
	"github.com/profdiff/profdiff/profile/source"
)

// loadSources is source.Load for command cmd: the messages on stderr
// name the sources by their short names once they are resolved
// (setNames), each profile's symbolization is noted on stderr as it is
// handed on, the load warnings
// are printed once loading ends (see warningLines), and errors get the
// command's hints (argHint, loadHint).
func loadSources[T any](ctx context.Context, cmd string, stderr io.Writer, sides []source.Side, opts source.Options, prepare func(*source.Item) (T, error), add func(*source.Item, T) error) error {
	resolved := opts.Resolved
	opts.Resolved = func(srcs [][]string) error {
		setNames(stderr, srcs)
		if resolved != nil {
			return resolved(srcs)
		}
		return nil
	}
	w, err := source.Load(ctx, sides, opts, prepare, func(it *source.Item, v T) error {
		noteSymbols(stderr, it.Loaded)
		return add(it, v)
	})
	warn(stderr, warningLines(w)...)
	if err != nil {
		return loadHint(argHint(cmd, err))
	}
	return nil
}

// loadProfiles loads sides as profile models and hands each to add with
// its side (0 base, 1 new).
func loadProfiles(ctx context.Context, cmd string, stderr io.Writer, sides []source.Side, opts source.Options, add func(result.Side, *profile.Loaded) error) error {
	return loadSources(ctx, cmd, stderr, sides, opts, nil, func(it *source.Item, _ struct{}) error {
		return add(result.Side(it.Side), it.Loaded)
	})
}

// argHint turns an argument that names no source (*source.ArgError) into
// a usage error of cmd, with the flag that changes it where one does.
func argHint(cmd string, err error) error {
	var ae *source.ArgError
	if !errors.As(err, &ae) {
		return err
	}
	msg := err.Error()
	switch {
	case errors.Is(err, source.ErrStdinTwice):
		msg = cmd + ": " + msg
	case errors.Is(err, source.ErrRemote) && fleet.IsSource(ae.Arg):
		msg += "; pass --allow-remote to query a remote server"
	case errors.Is(err, source.ErrRemote):
		msg += "; pass --allow-remote to read profiles from a remote host"
	}
	return usagef("%s", msg)
}

// captureFileKind reports whether --kind names a capture folder's file
// that is not a profile kind: perf, the perf recording, whose kind
// profdiff detects from its events (cpu-clock is cpu).
func captureFileKind(kind string) bool { return kind == capture.PerfKind }

// loadHint adds to an error of loading or adding a profile how to fix it
// with this command's flags (the libraries name no CLI flags).
func loadHint(err error) error {
	var st *diff.SampleTypeError
	var pe *profile.Error
	switch {
	case errors.Is(err, profile.ErrTooLarge):
		return fmt.Errorf("%w (raise it with --max-size)", err)
	case errors.Is(err, profile.ErrUnsupported) && errors.As(err, &pe) && isPprofIndexURL(pe.Source):
		return &hinted{msg: err.Error() + "; or take them all at once with profdiff capture " + pe.Source, err: err}
	case errors.As(err, &st):
		return &hinted{msg: st.Message("pick a shared one with --sample-index"), err: err}
	case errors.Is(err, diff.ErrNoSampleType):
		return &hinted{msg: err.Error() + " (--sample-index takes one of these types' names, or its index)", err: err}
	case errors.Is(err, profile.ErrProfilerOnly):
		return fmt.Errorf("%w (--keep-profiler keeps them)", err)
	}
	return err
}

// isPprofIndexURL reports whether src is the URL of a /debug/pprof/
// index page (the profiles are below it).
func isPprofIndexURL(src string) bool {
	u, err := url.Parse(src)
	return err == nil && strings.Contains(src, "://") && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/debug/pprof")
}

// hinted is an error reworded with a command's hint; it still unwraps to
// the library's error.
type hinted struct {
	msg string
	err error
}

func (h *hinted) Error() string { return h.msg }
func (h *hinted) Unwrap() error { return h.err }
