package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	pprofile "github.com/google/pprof/profile"
	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/wait"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/profile/gotrace"
	"github.com/profdiff/profdiff/profile/perfscript"
	"github.com/profdiff/profdiff/profile/source"
)

const waitSynopsis = "  profdiff wait [flags] PROFILE [PROFILE ...]\n  profdiff wait [flags] --base A [--base A2] --new B [--new B2]\n"

// waitKinds are the profiles of a capture folder that say who made it
// wait: Go's mutex and block profiles, its execution trace, and a perf
// recording (whose sched_waking events name wakers).
var waitKinds = []string{"mutex", "block", "trace", capture.PerfKind}

// waitCommand is 'profdiff wait': who made it wait. Unlike diff and top,
// which read one kind of profile per side, it reads several kinds of one
// run together (a capture folder stands for its mutex, block, trace and
// perf files), so it is a command of its own: PROFILE... is one side,
// --base and --new two.
func waitCommand(fs *flag.FlagSet) runFunc {
	var out outputFlags
	var sf sideFlags
	var maxSize, focus string
	var top, paths, depth int
	var allowRemote, keepProfiler bool
	out.register(fs, render.Table, render.Markdown, render.CSV, render.JSON, render.HTML)
	sf.register(fs)
	fs.IntVar(&top, "top", 10, "locks, sites per lock and wake-up edges to show (0 for all; CSV and JSON hold every row)")
	fs.IntVar(&paths, "paths", gotrace.DefaultTop, "critical paths of the goroutines or threads with the most waiting, in a Go execution trace or a perf recording with wake-ups")
	fs.StringVar(&focus, "focus", "", "critical paths of the goroutines or threads with a frame matching this regexp instead")
	fs.IntVar(&depth, "depth", gotrace.DefaultDepth, "wake-ups a critical path follows back, at most")
	fs.StringVar(&maxSize, "max-size", "1GiB", "largest profile accepted, after decompression")
	fs.BoolVar(&allowRemote, "allow-remote", false, "allow profile URLs of a host that is not loopback")
	fs.BoolVar(&keepProfiler, "keep-profiler", false, "keep samples of the profiler's own goroutines (fgprof, runtime/pprof writer)")
	return func(ctx context.Context, e env, pos []string) error {
		o, err := out.resolve("wait", e)
		if err != nil {
			return err
		}
		size, err := profile.ParseSize(maxSize)
		if err != nil {
			return usagef("wait: --max-size: %v", err)
		}
		if paths < 0 || depth < 1 {
			return usagef("wait: --paths must be 0 or more and --depth 1 or more")
		}
		bopts := gotrace.BlameOptions{Top: paths, Depth: depth}
		if paths == 0 {
			bopts.Top = -1
		}
		if !keepProfiler {
			bopts.ProfilerFrame = profile.IsProfilerFrame
		}
		if focus != "" {
			re, err := compileFlag("--focus", focus)
			if err != nil {
				return err
			}
			bopts.Focus = re.MatchString
		}
		var sides []source.Side
		switch {
		case len(sf.bases) > 0 || len(sf.news) > 0:
			if sides, err = sf.sides("wait", pos); err != nil {
				return err
			}
		case len(pos) == 0:
			return usagef("wait: want at least one profile or capture folder (or --base and --new)")
		default:
			sides = []source.Side{{Args: pos}}
		}
		for i := range sides {
			if sides[i].Args, err = waitSources(sides[i].Args); err != nil {
				return err
			}
		}
		lopts := profile.Options{MaxSize: size, Stdin: e.stdin, AllowEmpty: true, KeepProfiler: keepProfiler}
		if !allowRemote {
			lopts.CheckURL = checkLoopback
		}
		ins := make([][]wait.Input, len(sides))
		err = loadProfiles(ctx, "wait", e.stderr, sides, source.Options{Load: lopts, AllowRemote: allowRemote}, func(side result.Side, l *profile.Loaded) error {
			in := wait.Input{Source: l.Source, Kind: l.Kind, Profile: l.Profile}
			remote := l.Source == "-" || strings.Contains(l.Source, "://")
			perfWake := l.Format == profile.FormatPerfScript && perfscript.HasWakeups(l.Profile) && (bopts.Top >= 0 || bopts.Focus != nil)
			switch {
			case l.Format == profile.FormatGoTrace && remote:
				warn(e.stderr, l.Source+": a Go execution trace not read from a file: its lock waits are paired by waker alone, and it has no critical path")
			case l.Format == profile.FormatGoTrace:
				b, err := blameTrace(l.Source, size, bopts)
				if err != nil {
					return err
				}
				in.Blamed = b
			case perfWake && remote:
				warn(e.stderr, l.Source+": a perf recording not read from a file has no critical path")
			case perfWake:
				popts := perfscript.PathOptions{Top: bopts.Top, Depth: bopts.Depth, Focus: bopts.Focus}
				if in.Paths, err = perfPaths(l.Source, size, popts); err != nil {
					return err
				}
			}
			ins[side] = append(ins[side], in)
			return nil
		})
		if err != nil {
			return err
		}
		r := wait.Analyze(ins, wait.Options{})
		warn(e.stderr, r.Warnings...)
		lim := present.WaitOptions{Locks: top, Sites: top, Wakeups: top}
		if o.format == render.JSON || o.format == render.CSV {
			lim = present.WaitOptions{} // data: every row (the CSV records have them all anyway)
		}
		return writeReport(ctx, e.stdout, o, present.Wait(r, lim))
	}
}

// waitSources expands each capture folder among args into its profiles
// that say who made it wait; other arguments pass through.
func waitSources(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if !capture.IsCaptureDir(a) {
			out = append(out, a)
			continue
		}
		m, err := capture.ReadManifest(a)
		if err != nil {
			return nil, err
		}
		n := len(out)
		for _, k := range waitKinds {
			if f, ok := m.File(k); ok {
				out = append(out, filepath.Join(a, f.Path))
			}
		}
		if len(out) == n {
			return nil, usagef("wait: %s: the capture folder has no mutex, block, trace or perf profile", a)
		}
	}
	return out, nil
}

// blameTrace reads the Go execution trace at path again (the loader kept
// its goroutine-time profile only) and follows its wake-ups
// (gotrace.Blame). A trace from standard input or a URL has no path to
// read again: the command gives it none, and says so.
func blameTrace(path string, maxSize int64, opts gotrace.BlameOptions) (*gotrace.Blamed, error) {
	data, err := readAgain(path, maxSize)
	if err != nil {
		return nil, err
	}
	b, err := gotrace.Blame(data, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return b, nil
}

// perfPaths reads the perf script text at path again and returns its
// critical paths (perfscript.CriticalPaths; nil without wake-ups). Text
// from standard input or a URL has none.
func perfPaths(path string, maxSize int64, opts perfscript.PathOptions) (*pprofile.Profile, error) {
	data, err := readAgain(path, maxSize)
	if err != nil {
		return nil, err
	}
	p, err := perfscript.CriticalPaths(string(data), opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return p, nil
}

// readAgain reads a file the loader read (gunzipped where it is gzip),
// for the critical path, which needs more of it than the loaded profile.
func readAgain(path string, maxSize int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: the critical path reads the file again: %v", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err == nil && len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		var z *gzip.Reader
		if z, err = gzip.NewReader(bytes.NewReader(data)); err == nil {
			data, err = io.ReadAll(io.LimitReader(z, maxSize+1))
		}
	}
	if err == nil && int64(len(data)) > maxSize {
		err = profile.ErrTooLarge
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}
