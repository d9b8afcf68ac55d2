package profile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/fleet"
	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/loaderr"
	"github.com/profdiff/profdiff/profile/internal/protoscan"
)

// parsePprofOrText reads what no binary reader of the registry sniffed:
// pprof's decoders first (the common case, parsed once), then the text
// readers, then the formats profdiff recognizes but does not read, then
// folded stacks.
func (l *Loaded) parsePprofOrText(in *input) (*Loaded, error) {
	gzipped := in.gzipped
	p, format, legacy, perr := l.parsePprof(in.data)
	switch {
	case perr == nil:
		l.Format = format
		return l.finish(p)
	case format == FormatPprof:
		// A well-formed protobuf whose content is inconsistent.
		return nil, &Error{l.Source, mark(ErrCorrupt, perr)}
	case format == FormatPprofLegacy:
		// A legacy binary CPU profile whose records are cut, or that
		// the pprof library refuses.
		return nil, inGunzipped(&Error{l.Source, mark(ErrCorrupt, perr)}, gzipped)
	case looksBinary(in.data):
		if isPprofCmdline(l.Source) {
			return nil, &Error{l.Source, mark(ErrUnsupported, errors.New("the program's command line (/debug/pprof/cmdline), not a profile"))}
		}
		if what := sniffUnsupportedBinary(in.data); what != "" {
			return nil, &Error{l.Source, mark(ErrUnsupported, unsupported(what))}
		}
		return nil, inGunzipped(&Error{l.Source, describeProtoError(perr, in)}, gzipped)
	}
	return l.parseText(in, perr, legacy)
}

// parseText reads text that pprof's decoders did not: the registry's text
// readers, unless a legacy pprof parser recognized its format (it then has
// the last word on what is wrong with the file), the unsupported text
// formats, then folded stacks.
func (l *Loaded) parseText(in *input, perr error, legacy bool) (*Loaded, error) {
	fail := func(kind, err error) (*Loaded, error) { return nil, &Error{l.Source, mark(kind, err)} }
	terr := in.decode()
	text := in.text
	if terr == nil && !legacy {
		if r := sniff(in, true); r != nil {
			return r.load(l, in)
		}
	}
	var fp *pprofile.Profile
	var warns []string
	var ferr error
	if terr == nil {
		if what := sniffHTML(text, l.Source); what != "" {
			return fail(ErrUnsupported, errors.New(what))
		}
		if what, ours := sniffUnsupportedText(text); ours {
			// A format profdiff reads whose reader did not take it.
			_, err := fail(ErrCorrupt, in.inText(errors.New(what+jsonBreak(in.bytes()))))
			return nil, inGunzipped(err, in.gzipped)
		} else if what != "" {
			return fail(ErrUnsupported, unsupported(what))
		}
		fp, warns, ferr = parseFoldedText(text) // decoded and sniffed once
	} else {
		ferr = terr // what ParseFolded says of text it cannot decode
	}
	switch {
	case errors.Is(ferr, errZeroCounts):
		return fail(ErrEmpty, errors.New("profile has no samples (every folded stack has count 0)"))
	case ferr != nil && loaderr.Kind(ferr) != nil:
		// Folded stacks that cannot be read right (counts past int64).
		return nil, &Error{l.Source, fmt.Errorf("folded stacks: %w", ferr)}
	case ferr != nil:
		// A legacy text profile the pprof library refuses, whether it
		// said "unrecognized" (a bad sample line of some formats) or
		// what is wrong: the line it stops at.
		if stop, ok := legacyTextStop(in.data); ok {
			_, err := fail(ErrCorrupt, errors.New(stop))
			return nil, inGunzipped(err, in.gzipped)
		}
		if legacy {
			return fail(ErrCorrupt, fmt.Errorf("malformed %v", perr))
		}
		return fail(ErrUnrecognized, fmt.Errorf("unknown format: not pprof, legacy pprof or folded stacks (%v)", ferr))
	}
	l.addWarnings(warns)
	// The pprof decoders validate what they return; this checks what the
	// folded parser built.
	if err := build.Check(fp); err != nil {
		return fail(ErrCorrupt, fmt.Errorf("malformed profile: %v", err))
	}
	l.Format = FormatFolded
	return l.finish(fp)
}

// finish is the end of the pprof and folded paths: the checks and facts
// every such profile gets.
func (l *Loaded) finish(p *pprofile.Profile) (*Loaded, error) {
	demangleFunctions(p)
	if len(p.Sample) == 0 {
		msg := "profile has no samples"
		if k := DetectKind(p); k == KindMutex || k == KindBlock {
			msg += " (Go records mutex and block profiles only after runtime.SetMutexProfileFraction or runtime.SetBlockProfileRate)"
		}
		// The empty profile comes with the error, for Load's
		// Options.AllowEmpty: a side of a diff may have recorded nothing.
		l.Kind, l.Profile = DetectKind(p), p
		return l, &Error{l.Source, mark(ErrEmpty, errors.New(msg))}
	}
	sums, warns, err := checkValues(p)
	if err != nil {
		return nil, &Error{l.Source, err}
	}
	l.addWarnings(warns)
	// A fleet server's merged profile has no period by design (Parca
	// answers 0; the manual says so): nothing to warn about.
	if p.Period == 0 && l.Format != FormatFolded && !fleet.IsSource(l.Source) {
		l.Warnings = append(l.Warnings, l.Source+": profile has no sampling period")
	}
	l.Kind = DetectKind(p)
	l.Profile = p
	CheckTiming(l, sums)
	return l, nil
}

// parsePprof tries the protobuf format, then pprof's legacy formats. The
// format it returns is "pprof" when data is a protobuf (err then says what is
// wrong with its content), "pprof-legacy" when a legacy parser read it, and
// "" when neither did: err then is the protobuf decoder's error, or, with
// legacy set, the error of a legacy parser that recognized its format but
// not the content.
func (l *Loaded) parsePprof(data []byte) (p *pprofile.Profile, format Format, legacy bool, err error) {
	if len(data) > 0 && data[0] < 1<<3 {
		// Field number 0, which protobuf reserves: no profile.proto
		// starts so, but pprof's decoder would read a gigabyte of zeros
		// for seconds before saying so. (The legacy CPU format does
		// start with zeros; ParseData below reads it.)
		err = errors.New("not a protobuf message (field 0)")
	} else {
		p, err = pprofile.ParseUncompressed(data)
	}
	if err == nil && len(p.SampleType) == 0 && len(p.Sample) == 0 && len(p.Location) == 0 && len(p.Function) == 0 {
		// Nearly any short byte string decodes as some protobuf; one that
		// holds nothing of a profile is not one.
		err = errors.New("no profile data")
	}
	if err == nil {
		p, err = l.checkPprof(data, p)
		return p, FormatPprof, false, err
	}
	if isGzip(data) || notLegacy(data) {
		// ParseData would decompress it again, without the size limit,
		// or decode the protobuf again for nothing.
		return nil, "", false, err
	}
	lp, lerr := pprofile.ParseData(data) // the protobuf again, then the legacy parsers
	if lc, ok := legacyCPUHeader(data); ok {
		// A binary CPU profile cut short: the library fails, or reads
		// the samples before the cut as the whole profile, and, for 64-bit
		// words, a record cut inside as a sample of zero addresses.
		const what = "legacy binary CPU profile (gperftools' format)"
		switch cut, how := lc.cut(data); {
		case how == legacyInside:
			return nil, FormatPprofLegacy, false, fmt.Errorf("%s, corrupt: %s", what, cut)
		case lerr != nil && how == legacyWhole:
			return nil, FormatPprofLegacy, false, fmt.Errorf("%s, corrupt after its samples' end-of-data record: the pprof library cannot read the memory map that follows (%s)", what, trimPprofErr(lerr))
		case lerr != nil:
			return nil, FormatPprofLegacy, false, fmt.Errorf("%s, corrupt: %s", what, cut)
		case how == legacyBetween:
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: %s: %s", l.Source, what, cut))
		}
	}
	if lerr == nil {
		warning, err := legacyTextCheck(data, lp)
		if err != nil {
			return nil, FormatPprofLegacy, false, err
		}
		if warning != "" {
			l.Warnings = append(l.Warnings, l.Source+": "+warning)
		}
		return lp, FormatPprofLegacy, false, nil
	}
	if le := trimPprofErr(lerr); le != "unrecognized profile format" && !strings.Contains(le, "token too long") && !looksBinary(data) {
		return nil, "", true, fmt.Errorf("legacy pprof profile: %s", le)
	}
	return nil, "", false, err
}

// checkPprof validates a decoded protobuf profile.
func (l *Loaded) checkPprof(data []byte, p *pprofile.Profile) (*pprofile.Profile, error) {
	verr := p.CheckValid()
	if verr == nil {
		return p, nil
	}
	// Some writers leave out Function/Location/Mapping ids and refer to
	// them by position. Numbering them by position is the only reading.
	// (CheckValid reports this as a reserved id 0, or as a sample or line
	// with a nil location or function, depending on what it checks first.)
	if fixed, n := numberMissingIDs(data); n > 0 {
		if p2, err := pprofile.ParseUncompressed(fixed); err == nil {
			if err = p2.CheckValid(); err == nil {
				l.Warnings = append(l.Warnings, fmt.Sprintf("%s: %d function/location/mapping message(s) had no id; numbered them by position", l.Source, n))
				return p2, nil
			}
		}
	}
	return nil, fmt.Errorf("malformed pprof profile: %v", verr)
}

// notLegacy reports that data, which starts with protobuf's field 0, is
// not one of pprof's legacy formats either, so that ParseData, which
// decodes the protobuf again before trying them (seconds for a gigabyte of
// zeros), need not run. The binary CPU format starts with its header
// (legacyCPUHeader); each text format has its header on the first line (a
// line that starts with a control character is no blank or comment line
// to skip: legacyTextHeader).
func notLegacy(data []byte) bool {
	if len(data) == 0 || data[0] >= 1<<3 {
		return false
	}
	if _, ok := legacyCPUHeader(data); ok {
		return false
	}
	return !legacyTextHeader(data)
}

// legacyTextHeader reports whether data's first line could be the header
// of one of pprof's legacy text formats: each names "profile" or holds
// "---", on the first line the library reads (bufio.Scanner's, 64 KiB at
// most, or the whole data).
func legacyTextHeader(data []byte) bool {
	first, _, _ := bytes.Cut(data[:min(len(data), 64<<10)], []byte("\n"))
	return bytes.Contains(first, []byte("profile")) || bytes.Contains(first, []byte("---"))
}

// looksBinary reports whether data is not text; such data that pprof cannot
// parse is a corrupt or truncated profile, not a folded file.
func looksBinary(data []byte) bool {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return false // UTF-16 text
	}
	n := len(data)
	if n > 4096 {
		n = 4096
	}
	ctrl := 0
	for _, c := range data[:n] {
		// Form feeds separate pages of text reports (gprof's).
		if c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f') {
			ctrl++
		}
	}
	return ctrl > 0
}

// trimPprofErr returns the message of an error of the pprof library without
// its prefix. That library exports no error values, so telling its
// "unrecognized profile format" apart from a recognized but broken legacy
// file has to read the text; this and parsePprof are the only places that
// do, and only for its errors.
func trimPprofErr(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "parsing profile: ")
	if strings.Contains(s, "token too long") {
		s = "unrecognized profile format"
	}
	return s
}

// protoStart reports whether data starts with the tag of a field of
// profile.proto's Profile message with its wire type, as every pprof
// protobuf does (Go's writer starts with sample_type, 0x0a).
func protoStart(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	switch data[0] {
	case 0x0a, 0x12, 0x1a, 0x22, 0x2a, 0x32, // sample_type ... string_table
		0x38, 0x40, 0x48, 0x50, 0x5a, 0x60, 0x68, 0x6a, 0x70: // drop_frames ... default_sample_type
		return true
	}
	return false
}

// describeProtoError words the pprof library's error on in's data, which
// no decoder took: a broken pprof protobuf, placed where its framing or
// in.place says, or data that is no profile.
func describeProtoError(err error, in *input) error {
	data, place := in.data, in.place
	s := trimPprofErr(err)
	switch {
	case protoStart(data):
		// The library names no place; the framing of the top level
		// does, where it breaks there (a file cut short, most often).
		// Below the top level, another decoder may (input.place).
		msg := protoscan.Explain(data, s)
		if msg == s && place != nil {
			switch where := place(); {
			case where == "":
			case strings.HasSuffix(where, ": "+s):
				msg = where // the same words, placed
			default:
				msg = where + " (" + s + ")"
			}
		}
		return mark(ErrCorrupt, fmt.Errorf("truncated or corrupt pprof data: %s", msg))
	case in.gzipped:
		return mark(ErrUnrecognized, fmt.Errorf("unknown format: gzip data that is not a profile (not pprof: %s)", s))
	}
	return mark(ErrUnrecognized, fmt.Errorf("unknown binary format (not pprof: %s)", s))
}
