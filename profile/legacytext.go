package profile

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	pprofile "github.com/google/pprof/profile"
)

// pprof's legacy text formats (gperftools' heap, growth, contention and
// thread profiles, Java's, and Go's debug=1 pages: goroutine,
// threadcreate, mutex, block, heap) are read by the pprof library, line by
// line. It says neither which line it refused nor, for a sample line
// of some formats, anything but "unrecognized profile format"; its Java
// reader ends the samples at the first line that is not one, silently. The
// functions here find the line by asking the same library about parts of
// the file (runs of its lines after its header, and its prefixes), so that
// what is judged right or wrong stays the library's and profdiff keeps no
// second grammar of these formats.

// legacyTextLocateMax is the largest file whose broken line
// legacyTextStop looks for, and legacyTextPrefixMax the largest it looks
// for by prefixes alone. The library reads legacy text at about 15 MB/s
// here; the search by windows costs about five parses of the file (3 s
// at 4 MiB), the search by prefixes about 2·log2(lines) (1.8 s at 1 MiB):
// see BenchmarkLegacyTextStop.
const (
	legacyTextLocateMax = 4 << 20
	legacyTextPrefixMax = 1 << 20
)

// legacyTextHeadLines is how many lines the header of a legacy text
// format takes at most: a header line and its attributes
// ("format = java", "sampling period = 100", ...).
const legacyTextHeadLines = 16

// legacyTextClose is the memory map's header, which ends the records of
// every legacy text format (a thread profile's last stack has no other
// end); a prefix is parsed with it after, so that a prefix that ends
// with a whole record reads.
const legacyTextClose = "--- Memory map: ---\n"

// legacyText is a legacy text profile split into lines, to ask the pprof
// library about its prefixes.
type legacyText struct {
	data []byte
	ends []int // the offset just past each line (its newline, or the end of data)
}

// newLegacyText splits data into lines where it could be one of pprof's
// legacy text formats, by its first line (legacyTextHeader).
func newLegacyText(data []byte) (legacyText, bool) {
	if len(data) == 0 || looksBinary(data) {
		return legacyText{}, false
	}
	if _, ok := legacyCPUHeader(data); ok {
		return legacyText{}, false
	}
	if !legacyTextHeader(data) {
		return legacyText{}, false
	}
	t := legacyText{data: data}
	for off := 0; off < len(data); {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			t.ends = append(t.ends, len(data))
			break
		}
		off += i + 1
		t.ends = append(t.ends, off)
	}
	return t, true
}

// lines is how many lines t has.
func (t legacyText) lines() int { return len(t.ends) }

// start is the offset where line k (from 1) starts.
func (t legacyText) start(k int) int {
	if k <= 1 {
		return 0
	}
	return t.ends[k-2]
}

// line is line k (from 1), with its newline.
func (t legacyText) line(k int) []byte { return t.data[t.start(k):t.ends[k-1]] }

// quote is line k for a message: quoted (escaped) and cut to 60
// characters.
func (t legacyText) quote(k int) string {
	s := strings.TrimRight(string(t.line(k)), "\r\n")
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:60]) + "…"
	}
	return strconv.Quote(s)
}

// cut reports whether the last line has no newline: every producer ends
// each line with one, so such a file was cut inside its last line.
func (t legacyText) cut() bool { return t.data[len(t.data)-1] != '\n' }

// parse is what the pprof library reads of lines 1 to k, closed by
// legacyTextClose. A prefix that ends inside a record of several lines
// (a thread's header without its stack) may still fail.
func (t legacyText) parse(k int) (*pprofile.Profile, error) { return t.window(k, k, k) }

// window is what the pprof library reads of lines 1 to h (a header),
// then lines from+1 to k, closed by legacyTextClose.
func (t legacyText) window(h, from, k int) (*pprofile.Profile, error) {
	b := make([]byte, 0, t.start(h+1)+t.start(k+1)-t.start(from+1)+1+len(legacyTextClose))
	b = append(append(b, t.data[:t.start(h+1)]...), t.data[t.start(from+1):t.start(k+1)]...)
	if b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return pprofile.ParseData(append(b, legacyTextClose...))
}

// nextLine is the first line after k that is not blank, or lines()+1.
func (t legacyText) nextLine(k int) int {
	k++
	for k <= t.lines() && len(bytes.TrimSpace(t.line(k))) == 0 {
		k++
	}
	return k
}

// head is what the library reads of the shortest prefix of at most
// legacyTextHeadLines lines that it reads (a header and its attributes),
// and how many lines that is; nil where none reads, which is no legacy
// text format.
func (t legacyText) head() (*pprofile.Profile, int) {
	for k := 1; k <= min(t.lines(), legacyTextHeadLines); k++ {
		if p, err := t.parse(k); err == nil {
			return p, k
		}
	}
	return nil, 0
}

// what names the kind of legacy text profile p, by its first sample
// type: "legacy pprof heap profile (text)", "... contention ...",
// "... thread ...", "... goroutine ...".
func legacyTextWhat(p *pprofile.Profile) string {
	noun := "text"
	if len(p.SampleType) > 0 {
		switch noun = p.SampleType[0].Type; noun {
		case "objects", "alloc_objects", "inuse_objects", "space", "inuse_space":
			noun = "heap"
		case "contentions":
			noun = "contention"
		}
	}
	return "legacy pprof " + noun + " profile (text)"
}

// legacyTextStop finds the line of data, a legacy text profile that the
// pprof library refuses, at which the library stops, and says it. That
// line, k, is the first whose prefix (lines 1 to k) fails to read while
// the prefix before it reads; a prefix that ends inside a record may fail
// though nothing is wrong (a thread's header without its stack), so the
// prefix through the next line that is not blank must fail too.
//
// Most formats hold a sample a line, so a run of lines read after the
// header alone fails where one of them does: the search halves such runs
// (windows), reading each line about once, and the prefixes then confirm
// the line it finds. Where they do not (records of several lines, Java's
// sections), it halves the prefixes instead. It reports false where data
// is not recognisably a legacy text profile (no prefix of its header lines
// reads), or is too large to search (legacyTextLocateMax,
// legacyTextPrefixMax).
func legacyTextStop(data []byte) (string, bool) {
	if len(data) > legacyTextLocateMax {
		return "", false
	}
	t, ok := newLegacyText(data)
	if !ok {
		return "", false
	}
	head, h := t.head()
	if head == nil {
		return "", false
	}
	what, n := legacyTextWhat(head), t.lines()
	fails := func(k int) bool { _, err := t.parse(k); return err != nil }
	stops := func(k int) bool {
		next := t.nextLine(k)
		return fails(k) && (next > n || fails(next))
	}
	if !fails(n) {
		// Every line reads once the records are closed.
		return fmt.Sprintf("%s, corrupt: the file ends at line %d inside its records, before what closes them (a file cut short?)", what, n), true
	}
	lo, hi := h, n // the stop is in (lo, hi]
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if _, err := t.window(h, lo, mid); err != nil {
			hi = mid
		} else {
			lo = mid
		}
	}
	if hi <= h || fails(hi-1) || !stops(hi) {
		if len(data) > legacyTextPrefixMax {
			return "", false
		}
		lo, hi = h, n
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if stops(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
	}
	_, err := t.parse(hi)
	why := trimPprofErr(err)
	switch why {
	case "unrecognized profile format", "malformed profile format":
		why = "not a line this format holds there"
	}
	if hi == n && t.cut() {
		return fmt.Sprintf("%s, corrupt: %s; the parser stops there: %s", what, legacyTextCut(n), why), true
	}
	return fmt.Sprintf("%s, malformed at line %d, %s: %s", what, hi, t.quote(hi), why), true
}

// legacyTextCut says that a file's last line, line n, has no newline.
func legacyTextCut(n int) string {
	return fmt.Sprintf("the file ends inside line %d, without the newline that ends every line (a file cut short?)", n)
}

// legacyTextCheck checks data, a legacy text profile that the pprof
// library read as p, for what the library reads without a word:
//   - samples that stop at a line that is not one, with more after it
//     (the Java formats' reader ends its samples at the first line that
//     is not a sample): an error naming that line;
//   - a last line without a newline (a file cut inside it): an error
//     where the line holds sample data (a count or an address read cut),
//     else a warning.
//
// A file cut at the end of a line reads as a whole file of fewer lines.
func legacyTextCheck(data []byte, p *pprofile.Profile) (warning string, err error) {
	t, ok := newLegacyText(data)
	if !ok {
		return "", nil
	}
	what, n := legacyTextWhat(p), t.lines()
	if s, ok := t.samplesStop(p); ok {
		return "", fmt.Errorf("%s, malformed at line %d, %s: its samples stop there, and more follow", what, s, t.quote(s))
	}
	if !t.cut() || n == 1 {
		// A header alone holds no samples: the loader says so.
		return "", nil
	}
	before, err := pprofile.ParseData(t.data[:t.start(n)])
	if err != nil || !sameSamples(before, p) {
		return "", fmt.Errorf("%s, corrupt: %s; the samples read otherwise without that line, so it is part of them", what, legacyTextCut(n))
	}
	return fmt.Sprintf("%s: %s; the samples are whole, and that line, after them, was read as it stands", what, legacyTextCut(n)), nil
}

// samplesStop finds the line at which the library's reading of t's
// samples stopped where samples follow it: the first line that is not
// blank after the shortest prefix that holds all of p's samples (by the
// sum of their values, which each sample line adds to), if the file
// without that line reads more. Only the Java formats' reader stops so;
// the others fail, and legacyTextStop finds the line. It halves prefixes,
// on a file that loads, so it looks only where the file is at most
// legacyTextPrefixMax (the corpus's Java text profiles are 2 and 9 KB).
func (t legacyText) samplesStop(p *pprofile.Profile) (int, bool) {
	if !isJava(t) || len(t.data) > legacyTextPrefixMax {
		return 0, false
	}
	head, lo := t.head()
	if head == nil {
		return 0, false
	}
	total, n := valueSum(p), t.lines()
	hi := n // lines 1..hi hold every sample
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if q, err := t.parse(mid); err == nil && valueSum(q) >= total {
			hi = mid
		} else {
			lo = mid
		}
	}
	s := t.nextLine(hi)
	if s > n {
		return 0, false
	}
	without := append(append([]byte{}, t.data[:t.start(s)]...), t.data[t.ends[s-1]:]...)
	if q, err := pprofile.ParseData(without); err == nil && valueSum(q) > total {
		return s, true
	}
	return 0, false
}

// isJava reports whether t is one of the Java formats: an attribute
// "format = java" among its header lines.
func isJava(t legacyText) bool {
	for k := 2; k <= min(t.lines(), legacyTextHeadLines); k++ {
		key, val, ok := strings.Cut(string(t.line(k)), "=")
		if ok && strings.TrimSpace(key) == "format" && strings.TrimSpace(val) == "java" {
			return true
		}
	}
	return false
}

// valueSum is the sum of the absolute values of p's samples.
func valueSum(p *pprofile.Profile) uint64 {
	var sum uint64
	for _, s := range p.Sample {
		for _, v := range s.Value {
			if v < 0 {
				v = -v
			}
			sum += uint64(v)
		}
	}
	return sum
}

// sameSamples reports whether a and b hold the same samples, in order:
// their values, and their stacks by address and function name (the Java
// formats' reader merges locations by name and drops their addresses).
func sameSamples(a, b *pprofile.Profile) bool {
	return slices.EqualFunc(a.Sample, b.Sample, func(s, u *pprofile.Sample) bool {
		return slices.Equal(s.Value, u.Value) && slices.EqualFunc(s.Location, u.Location, func(l, m *pprofile.Location) bool {
			return l.Address == m.Address && frameName(l) == frameName(m)
		})
	})
}

// frameName is the function name of a location's first line, or "".
func frameName(l *pprofile.Location) string {
	if len(l.Line) == 0 || l.Line[0].Function == nil {
		return ""
	}
	return l.Line[0].Function.Name
}
