package profile

import (
	"path/filepath"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/perfscript"
	"github.com/profdiff/profdiff/symbolize"
)

// symbolizeLoaded names the address-only locations of a loaded profile
// from the symbol files opts leads to (symbolize.Symbolize), keeps the
// report in l.Symbols and adds its one warning, if any, to l.Warnings.
//
// perf script's `[unknown]` frames in a perf map or a stripped binary
// (perfscript.Unnamed) are named too when opts names any path: their
// placeholder lines are set aside, the map or binary names what it can
// (a binary's frames are file offsets, which a perf script Mapping's zero
// start and offset pass through as such), and the names are tidied as
// perf script's own would have been (perfscript.TidyName); what stays
// unnamed gets its placeholder back. Their addresses are return addresses for
// callers (symbolize.Options.ReturnAddresses); a pprof profile's are not.
// A profile without such locations is left as it was, and l.Symbols nil.
func symbolizeLoaded(l *Loaded, opts symbolize.Options) {
	p := l.Profile
	if p == nil {
		return
	}
	var held map[*pprofile.Location][]pprofile.Line
	if l.Format == FormatPerfScript {
		opts.ReturnAddresses = true
		if searched(opts) {
			held = holdPlaceholders(p)
			recordedBuildIDs(p)
		}
	}
	if !hasAddressOnly(p) {
		return
	}
	firstNew := uint64(0)
	for _, f := range p.Function {
		firstNew = max(firstNew, f.ID+1)
	}
	rep, err := symbolize.Symbolize(p, opts)
	if err != nil {
		l.Warnings = append(l.Warnings, l.Source+": symbols: "+err.Error())
		return
	}
	if held != nil {
		tidyNamed(p, held, firstNew)
	}
	l.Symbols = rep
	if w := rep.Warning(); w != "" {
		l.Warnings = append(l.Warnings, l.Source+": "+w)
	}
}

// searched reports whether opts lead anywhere beyond the mappings' own
// files: the caller's paths, PPROF_BINARY_PATH or a debuginfod cache.
func searched(opts symbolize.Options) bool {
	if len(opts.Paths) > 0 {
		return true
	}
	return opts.Env != nil && (opts.Env("PPROF_BINARY_PATH") != "" || opts.Env("DEBUGINFOD_CACHE_PATH") != "")
}

// recordedBuildIDs gives a perf script mapping, which perf script prints
// without a build ID, the build ID of the file at its path, when that
// file is still there: the binary perf recorded, so a symbol file is
// matched to it by build ID (a rebuilt binary of the same name is
// rejected, a debug file or an unstripped copy of another name found).
func recordedBuildIDs(p *pprofile.Profile) {
	for _, m := range p.Mapping {
		if m.BuildID != "" || !filepath.IsAbs(m.File) || perfscript.IsJITDSO(m.File) {
			continue
		}
		if gnu, _, err := symbolize.ReadBuildID(m.File); err == nil && gnu != "" {
			m.BuildID = gnu
		}
	}
}

func hasAddressOnly(p *pprofile.Profile) bool {
	for _, loc := range p.Location {
		if loc.Address != 0 && len(loc.Line) == 0 {
			return true
		}
	}
	return false
}

// holdPlaceholders takes the placeholder line off each unnamed perf
// script location and returns them by location.
func holdPlaceholders(p *pprofile.Profile) map[*pprofile.Location][]pprofile.Line {
	held := map[*pprofile.Location][]pprofile.Line{}
	for _, loc := range p.Location {
		if loc.Address != 0 && perfscript.Unnamed(loc) {
			held[loc] = loc.Line
			loc.Line = nil
		}
	}
	return held
}

// tidyNamed gives the locations no file named their placeholder back, and
// names the Functions the files added (ID ≥ firstNew) as perf script would
// have printed them: TidyName of the (demangled) name, in a java process
// without the `L` of a class descriptor.
func tidyNamed(p *pprofile.Profile, held map[*pprofile.Location][]pprofile.Line, firstNew uint64) {
	java := map[*pprofile.Location]bool{}
	for _, s := range p.Sample {
		if len(s.Label["comm"]) == 1 && s.Label["comm"][0] == "java" {
			for _, loc := range s.Location {
				java[loc] = true
			}
		}
	}
	done := map[*pprofile.Function]bool{}
	for loc, lines := range held {
		if len(loc.Line) == 0 {
			loc.Line = lines
			continue
		}
		for _, ln := range loc.Line {
			if f := ln.Function; f.ID >= firstNew && !done[f] {
				done[f] = true
				f.Name = perfscript.TidyName(f.Name, loc.Mapping.File, java[loc])
			}
		}
	}
	removeUnusedFunctions(p)
}

// removeUnusedFunctions drops the Functions no line refers to any more (the
// placeholders of JIT frames the map named).
func removeUnusedFunctions(p *pprofile.Profile) {
	used := map[*pprofile.Function]bool{}
	for _, loc := range p.Location {
		for _, ln := range loc.Line {
			used[ln.Function] = true
		}
	}
	kept := p.Function[:0]
	for _, f := range p.Function {
		if used[f] {
			kept = append(kept, f)
		}
	}
	clear(p.Function[len(kept):])
	p.Function = kept
}
