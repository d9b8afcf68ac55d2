package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
)

const captureSynopsis = `  profdiff capture [flags] URL --out DIR

Pulls, during one window of --seconds, every profile a live Go server
exposes, concurrently: CPU (/debug/pprof/profile), wall-clock
(/debug/fgprof, skipped with a note when the server has none), mutex and
block as deltas over the window, a goroutine snapshot mid-window, and an
execution trace. Writes cpu.pb.gz, wall.pb.gz, mutex.pb.gz, block.pb.gz,
goroutine.pb.gz, trace.out and manifest.json to DIR (which must not exist
or be empty). A profile that cannot be captured is reported and recorded in
the manifest; the command fails only when none was captured.

URL is the server's root or its /debug/pprof/ page
(http://127.0.0.1:6060 or http://127.0.0.1:6060/debug/pprof/). Only
loopback hosts (127.0.0.0/8, ::1, localhost) are allowed unless
--allow-remote is given.

DIR is then one side of 'profdiff diff DIR_A DIR_B' (--kind picks the
profile; default wall, else cpu).
`

func runCapture(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		seconds     int
		out         string
		profiles    []string
		allowRemote bool
		maxSize     string
	)
	fs := newFlagSet("capture", captureSynopsis, stderr)
	fs.IntVar(&seconds, "seconds", 10, "length of the capture window")
	fs.StringVar(&out, "out", "", "folder to write (required; must not exist or be empty)")
	fs.StringSliceVar(&profiles, "profiles", nil, "kinds to capture, comma-separated (default all: "+strings.Join(capture.Kinds, ",")+")")
	fs.BoolVar(&allowRemote, "allow-remote", false, "allow a host that is not loopback")
	fs.StringVar(&maxSize, "max-size", "1GiB", "largest profile accepted")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("capture: want one URL, got %d arguments", fs.NArg())
	}
	if out == "" {
		return usagef("capture: --out DIR is required")
	}
	if seconds < 1 {
		return usagef("capture: --seconds must be at least 1, not %d", seconds)
	}
	for _, k := range profiles {
		if !slices.Contains(capture.Kinds, k) {
			return usagef("capture: --profiles: unknown kind %q (want %s)", k, strings.Join(capture.Kinds, ", "))
		}
	}
	size, err := profile.ParseSize(maxSize)
	if err != nil {
		return usagef("capture: --max-size: %v", err)
	}
	base, err := capture.BaseURL(fs.Arg(0))
	if err != nil {
		return usagef("capture: %v", err)
	}
	if !allowRemote && !isLoopbackHost(base.Hostname()) {
		return usagef("capture: %s is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to capture from a remote host", base.Hostname())
	}
	m, err := capture.Capture(ctx, base.String(), capture.Options{
		Seconds:  seconds,
		Out:      out,
		Log:      stderr,
		Profiles: profiles,
		MaxSize:  size,
	})
	if err != nil {
		return err
	}
	kinds := make([]string, len(m.Files))
	for i, f := range m.Files {
		kinds[i] = f.Kind
	}
	fmt.Fprintf(stdout, "%s: %s (%d of %d profiles)\n", out, strings.Join(kinds, ", "), len(m.Files), len(m.Files)+len(m.Errors))
	return nil
}

// isLoopbackHost reports whether host is localhost or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// resolveCaptureDirs replaces each capture folder among the two sides'
// sources (a directory holding manifest.json, as profdiff capture writes)
// with the path of one of its profiles: the kind given with --kind, or,
// without it, wall when every capture folder given has wall, else cpu, so
// that both sides are of one kind. Other sources pass through unchanged,
// except a directory without a manifest, which is an error naming the
// problem.
func resolveCaptureDirs(bases, news []string, kind string) ([]string, []string, error) {
	if kind == "" {
		kind = commonCaptureKind(append(append([]string(nil), bases...), news...))
	}
	var sides [2][]string
	for i, srcs := range [2][]string{bases, news} {
		sides[i] = make([]string, len(srcs))
		for j, s := range srcs {
			p, err := resolveCaptureDir(s, kind)
			if err != nil {
				return nil, nil, err
			}
			sides[i][j] = p
		}
	}
	return sides[0], sides[1], nil
}

// commonCaptureKind is the default kind for the capture folders among
// srcs: wall if all have it, else cpu ("" when there are no folders or a
// manifest cannot be read; resolveCaptureDir then reports the problem).
func commonCaptureKind(srcs []string) string {
	var ms []*capture.Manifest
	for _, s := range srcs {
		if s == "-" || strings.Contains(s, "://") || !capture.IsCaptureDir(s) {
			continue
		}
		m, err := capture.ReadManifest(s)
		if err != nil {
			return ""
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return ""
	}
	for _, m := range ms {
		if _, ok := m.File("wall"); !ok {
			return "cpu"
		}
	}
	return "wall"
}

// resolveCaptureDir returns the path of the profile of kind in path when
// path is a capture folder, path itself when it is not a directory.
func resolveCaptureDir(path, kind string) (string, error) {
	if path == "-" || strings.Contains(path, "://") {
		return path, nil
	}
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return path, nil // Load reports a missing file
	}
	if !capture.IsCaptureDir(path) {
		return "", fmt.Errorf("%s: a directory without %s, not a profdiff capture folder", path, capture.ManifestName)
	}
	return capture.ProfilePath(path, kind)
}
