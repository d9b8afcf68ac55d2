package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff/gate"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
)

// flagError is a flag parsing error of fs as a usage error. An unknown
// flag gets the nearest of fs's flags as a suggestion (--formt: did you
// mean --format?), an unknown short flag the list of short flags.
func flagError(fs *flag.FlagSet, err error) error {
	var ne *flag.NotExistError
	if !errors.As(err, &ne) {
		return usagef("%s: %v", fs.Name(), err)
	}
	if ne.GetSpecifiedShortnames() != "" {
		shorts := shortFlags(fs)
		if len(shorts) == 0 {
			return usagef("%s: %v (it has no short flags)", fs.Name(), err)
		}
		return usagef("%s: %v (its short flags: %s)", fs.Name(), err, strings.Join(shorts, ", "))
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if s := nearest(ne.GetSpecifiedName(), names); s != "" {
		return usagef("%s: %v; did you mean --%s?", fs.Name(), err, s)
	}
	return usagef("%s: %v", fs.Name(), err)
}

// shortFlags lists fs's visible short flags with their long names, sorted:
// "-c (--connections)".
func shortFlags(fs *flag.FlagSet) []string {
	var shorts []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Shorthand != "" && !f.Hidden {
			shorts = append(shorts, fmt.Sprintf("-%s (--%s)", f.Shorthand, f.Name))
		}
	})
	sort.Strings(shorts)
	return shorts
}

// didYouMean is "; did you mean X?" for the choice that typed most likely
// misspells (see nearest), or "" when none is near: value typos get the
// suggestion that command and flag typos get.
func didYouMean(typed string, choices []string) string {
	if s := nearest(typed, choices); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}

// kindNames is --kind's choices: the profile kinds, and perf for a capture
// folder's perf recording.
func kindNames() []string {
	names := []string{capture.PerfKind}
	for _, k := range profile.Kinds {
		names = append(names, string(k))
	}
	return names
}

// bucketNames is what gate's --max names: the buckets and sync.
func bucketNames() []string {
	var names []string
	for _, b := range rules.Buckets {
		names = append(names, b.String())
	}
	return append(names, gate.SyncName)
}
