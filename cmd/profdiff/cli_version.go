package main

import (
	"context"
	"fmt"
	"runtime/debug"

	flag "github.com/spf13/pflag"
)

// modulePath names the module in --version when the build info has no
// main module (a test binary).
const modulePath = "github.com/profdiff/profdiff"

// versionCommand is 'profdiff version' and 'profdiff --version'.
func versionCommand(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, e env, pos []string) error {
		if err := noArgs("version", pos); err != nil {
			return err
		}
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			return fmt.Errorf("version: this binary carries no build information")
		}
		_, err := fmt.Fprintln(e.stdout, versionLine(bi))
		return err
	}
}

// versionLine says which profdiff this is: the module and its version
// ("(devel)" for a build from a checkout), the VCS revision it was built
// from, marked +dirty when the work tree had uncommitted changes, with the
// commit's time, and the Go release that built it:
//
//	profdiff github.com/profdiff/profdiff v1.2.0, revision 0123…cdef+dirty (2026-12-01T20:00:00Z), go1.26.0
func versionLine(bi *debug.BuildInfo) string {
	path, version := bi.Main.Path, bi.Main.Version
	if path == "" {
		path = modulePath
	}
	if version == "" {
		version = "(devel)"
	}
	var rev, when string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	line := fmt.Sprintf("profdiff %s %s, ", path, version)
	switch {
	case rev == "":
		line += "no VCS revision recorded"
	default:
		line += "revision " + rev
		if dirty {
			line += "+dirty"
		}
		if when != "" {
			line += " (" + when + ")"
		}
	}
	return line + ", " + bi.GoVersion
}
