package symbolize

import pprofile "github.com/google/pprof/profile"

// Options says where Symbolize looks for symbol files.
type Options struct {
	// Paths are what --symbols named, in order: binaries, separate debug
	// files, perf maps, or directories searched like PPROF_BINARY_PATH
	// and like a debuginfod client cache (BUILDID/debuginfo).
	Paths []string
	// Env is consulted for PPROF_BINARY_PATH and DEBUGINFOD_CACHE_PATH
	// (nil: no environment).
	Env func(string) string
}

// Report says what Symbolize did, mapping by mapping.
type Report struct {
	Mappings []MappingReport
}

// MappingReport is one mapping of the profile: which file served it, or
// why none did, and how many of its sampled locations were named.
type MappingReport struct {
	File     string // the mapping's file, as the profile names it
	BuildID  string
	ServedBy string // the symbol file used, "" when none
	Why      string // why none was, when ServedBy is ""
	// Locations and Named count the mapping's locations that had no name
	// and those Symbolize named; Share is the share of the profile's
	// sampled value (first sample type) at locations left unnamed.
	Locations, Named int
	Share            float64
}

// Symbolize names the locations of p that have an address but no
// function, from the symbol files opts lead to, in place. Locations that
// already have names are left alone.
//
// Skeleton: it names nothing yet.
func Symbolize(p *pprofile.Profile, opts Options) (*Report, error) {
	return &Report{}, nil
}
