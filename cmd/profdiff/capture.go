package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/profile/source"
)

const captureSynopsis = `  profdiff capture [flags] URL --out DIR

Pulls, during one window of --duration, every profile a live Go server
exposes, concurrently: CPU (/debug/pprof/profile), wall-clock
(/debug/fgprof, skipped with a note when the server has none), mutex and
block as deltas over the window, a goroutine snapshot mid-window, and an
execution trace. Writes cpu.pb.gz, wall.pb.gz, mutex.pb.gz, block.pb.gz,
goroutine.pb.gz, trace.out.gz and manifest.json to DIR (which must not exist,
be empty, or hold a capture that did not complete, which is replaced). A
profile that cannot be captured is reported and recorded in the manifest;
the command fails when none was captured (each cause said once), or when
it is interrupted; the manifest then says "complete": false. Each download
and each profile decompressed is bounded by --max-size as bytes arrive.

URL is the server's root or its /debug/pprof/ page
(http://127.0.0.1:6060 or http://127.0.0.1:6060/debug/pprof/). Only
loopback hosts (127.0.0.0/8, ::1, localhost) are allowed, and redirects
are followed (at most 3) only to them, unless --allow-remote is given.

DIR is then one side of 'profdiff diff DIR_A DIR_B' (--kind picks the
profile; default wall, else cpu).
`

// captureFlags are the flags of 'profdiff capture': the capture's
// Options, filled in by the flags, and what is checked before they are
// used.
type captureFlags struct {
	opts        capture.Options
	duration    time.Duration
	out         outputFlags
	maxSize     string
	allowRemote bool
}

func captureCommand(fs *flag.FlagSet) runFunc {
	var f captureFlags
	durationFlag(fs, &f.duration, 10*time.Second, "length of the capture window, whole seconds", true)
	fs.StringVarP(&f.opts.Out, "out", "o", "", "folder to write (required; must not exist or be empty)")
	fs.StringSliceVar(&f.opts.Profiles, "profiles", nil, "kinds to capture, comma-separated (default all: "+strings.Join(capture.Kinds, ",")+")")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a host that is not loopback")
	fs.StringVar(&f.maxSize, "max-size", "1GiB", "largest profile accepted")
	fs.IntVar(&f.opts.PerfPID, "perf-pid", 0, "also record this local process with perf during the window (perf.txt.gz, kind perf), where perf can record")
	f.out.register(fs, captureFormat...)
	return func(ctx context.Context, e env, pos []string) error {
		o, err := f.out.resolve("capture", e)
		if err != nil {
			return err
		}
		base, opts, err := f.options(pos)
		if err != nil {
			return err
		}
		opts.Log = e.stderr
		m, err := capture.Capture(ctx, base, opts)
		if err != nil {
			return err
		}
		kinds := make([]string, len(m.Files))
		for i, f := range m.Files {
			kinds[i] = f.Kind
		}
		line := report.Cat(opts.Out, ": ", strings.Join(kinds, ", "), " (", report.Int(int64(len(m.Files))), " of ", report.Int(int64(len(m.Files)+len(m.Errors))), " profiles)")
		return o.write(e.stdout, &report.Report{Blocks: []report.Block{report.Para{Lines: []report.Line{line}}}, JSON: m})
	}
}

// options validates the flags and the URL: the server's base URL and the
// capture's options.
func (f *captureFlags) options(pos []string) (string, capture.Options, error) {
	o := f.opts
	switch {
	case len(pos) != 1:
		return "", o, usagef("capture: want one URL, got %d arguments", len(pos))
	case o.Out == "":
		return "", o, usagef("capture: --out DIR is required")
	}
	if err := checkDuration("capture", f.duration, true); err != nil {
		return "", o, err
	}
	o.Seconds = wholeSeconds(f.duration)
	if o.PerfPID < 0 {
		return "", o, usagef("capture: --perf-pid: %d is not a process id", o.PerfPID)
	}
	for _, k := range o.Profiles {
		if !slices.Contains(capture.Kinds, k) {
			return "", o, usagef("capture: --profiles: unknown kind %q (want %s)%s", k, strings.Join(capture.Kinds, ", "), didYouMean(k, capture.Kinds))
		}
	}
	var err error
	if o.MaxSize, err = profile.ParseSize(f.maxSize); err != nil {
		return "", o, usagef("capture: --max-size: %v", err)
	}
	base, err := capture.BaseURL(pos[0])
	if err != nil {
		return "", o, usagef("capture: %v", err)
	}
	if !f.allowRemote {
		if err := checkLoopback(base); err != nil {
			return "", o, usagef("capture: %v", err)
		}
		o.CheckURL = checkLoopback
	}
	return base.String(), o, nil
}

// checkLoopback refuses a URL whose host is not loopback: the check of a
// typed URL and of every redirect, unless --allow-remote.
func checkLoopback(u *url.URL) error {
	if !source.IsLoopbackHost(u.Hostname()) {
		return fmt.Errorf("%s is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to use a remote host", u.Hostname())
	}
	return nil
}
