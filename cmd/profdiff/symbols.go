package main

import (
	"context"
	"fmt"
	"io"
	"os"

	pprofile "github.com/google/pprof/profile"
	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff/render/sink"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/source"
	"github.com/profdiff/profdiff/symbolize"
)

// registerSymbols registers --symbols on fs, into paths.
func registerSymbols(fs *flag.FlagSet, paths *[]string) {
	fs.StringArrayVar(paths, "symbols", nil, "a binary, separate debug file, perf map (perf-PID.map) or directory (searched like PPROF_BINARY_PATH and a debuginfod cache) to name address-only frames from (repeatable; PPROF_BINARY_PATH and DEBUGINFOD_CACHE_PATH are searched after)")
}

// symbolOptions validates the --symbols paths (each must exist) into the
// options profile.Load symbolizes with; the environment supplies
// PPROF_BINARY_PATH and the debuginfod cache.
func symbolOptions(paths []string) (symbolize.Options, error) {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return symbolize.Options{}, usagef("--symbols: %v", err)
		}
		if fi.IsDir() || symbolize.IsPerfMap(p) {
			continue
		}
		// A file named on its own must be one that names code: an ELF
		// binary or debug file with symbols (a perf map is read later).
		o, err := symbolize.OpenObject(p)
		if err != nil {
			return symbolize.Options{}, usagef("--symbols: %v", err)
		}
		o.Close()
	}
	return symbolize.Options{Paths: paths, PathsName: "--symbols", Env: os.Getenv}, nil
}

// noteSymbols says on stderr which file served which mapping of a loaded
// profile (the warning about what stayed unnamed is among its Warnings).
func noteSymbols(stderr io.Writer, l *profile.Loaded) {
	if l.Symbols == nil {
		return
	}
	for _, s := range l.Symbols.Served() {
		say(stderr, "%s: %s", l.Source, s)
	}
}

const symbolizeSynopsis = `  profdiff symbolize [flags] PROFILE -o OUT

Names the address-only frames of PROFILE (locations with an address and no
function: a pprof profile written unsymbolized, perf script's [unknown]
frames of a perf map) from the files --symbols names, PPROF_BINARY_PATH and
the debuginfod client cache, and writes the profile as gzipped pprof to OUT
("-" for standard output), which 'go tool pprof' shows with names. It
prints one line per mapping that had address-only frames (on stderr when
OUT is "-"): which file served it and how it matched (build ID or file
name), or why none did.
Every sample is kept (the profiler's own goroutines too).
`

func symbolizeCommand(fs *flag.FlagSet) runFunc {
	var paths []string
	var out, maxSize string
	var allowRemote bool
	registerSymbols(fs, &paths)
	fs.StringVarP(&out, "out", "o", "", "the symbolized profile's file (gzipped pprof; - for standard output)")
	fs.StringVar(&maxSize, "max-size", "1GiB", "largest profile accepted, after decompression")
	fs.BoolVar(&allowRemote, "allow-remote", false, "allow a profile URL of a host that is not loopback")
	return func(ctx context.Context, e env, pos []string) error {
		switch {
		case len(pos) != 1:
			return usagef("symbolize: want one profile, got %d arguments", len(pos))
		case out == "":
			return usagef("symbolize: -o OUT is required (the file to write)")
		}
		size, err := profile.ParseSize(maxSize)
		if err != nil {
			return usagef("--max-size: %v", err)
		}
		opts := profile.Options{MaxSize: size, KeepProfiler: true, AllowEmpty: true, Stdin: e.stdin}
		if opts.Symbols, err = symbolOptions(paths); err != nil {
			return err
		}
		if !allowRemote {
			opts.CheckURL = checkLoopback
		}
		var loaded *profile.Loaded
		src := source.Options{Load: opts, AllowRemote: allowRemote}
		if err := guardOutputs(&src, outputFile{"symbolize -o", out}); err != nil {
			return err
		}
		err = loadProfiles(ctx, "symbolize", e.stderr, []source.Side{{Args: pos}}, src, func(_ result.Side, l *profile.Loaded) error {
			loaded = l
			return nil
		})
		if err != nil {
			return err
		}
		report := e.stdout
		if out == "-" {
			report = e.stderr // the profile's bytes go to stdout
		}
		printSymbolReport(report, loaded)
		return writePprof("symbolize", out, e.stdout, loaded.Profile)
	}
}

// printSymbolReport is symbolize's summary: a line per mapping that had
// address-only frames, then the share left unnamed.
func printSymbolReport(w io.Writer, l *profile.Loaded) {
	r := l.Symbols
	if r == nil {
		fmt.Fprintf(w, "%s: no address-only frames; nothing to name\n", sink.Terminal(l.Source))
		return
	}
	for _, m := range r.Mappings {
		name := m.File
		if name == "" {
			name = "(no mapping)"
		}
		switch {
		case m.ServedBy != "":
			fmt.Fprintf(w, "%s: %d of %d addresses named from %s (by %s)\n", sink.Terminal(name), m.Named, m.Locations, sink.Terminal(m.ServedBy), m.By)
		default:
			fmt.Fprintf(w, "%s: %d addresses left: %s\n", sink.Terminal(name), m.Locations, sink.Terminal(m.Why))
		}
	}
	fmt.Fprintf(w, "unnamed: %.1f%% of samples\n", 100*r.Share)
}

// writePprof writes p gzipped to the file name ("-": to stdout); flag
// names the flag or command in errors.
func writePprof(flag, name string, stdout io.Writer, p *pprofile.Profile) error {
	if name == "-" {
		return p.Write(stdout)
	}
	f, err := createOutput(name)
	if err != nil {
		return fmt.Errorf("%s: %v", flag, err)
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: writing %s: %v", flag, name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %v", flag, err)
	}
	return nil
}
