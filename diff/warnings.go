package diff

import (
	"fmt"
	"go/version"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
)

// LowSamples is the sample count (sampled events, see CountColumn) under
// which a side gets a warning that small deltas are within sampling noise.
const LowSamples = 1000

// sideWarnings says what is odd about one side: it is empty, small (when
// noise matters: Top shows no deltas), or mixes kinds or periods.
func (a *Analyzer) sideWarnings(side result.Side, label string, t *ProfileStats, sources []string, noise bool) []string {
	m := &a.sides[side]
	if len(sources) == 0 {
		return nil
	}
	var w []string
	if t.Filtered > 0 && t.Total == 0 {
		w = append(w, fmt.Sprintf("%s: every sample was removed by the focus/ignore filters", label))
	} else if t.Total == 0 {
		typ := a.sampleType
		if typ == "" {
			typ = a.opts.SampleIndex // no profile has the selected type (Wait says so)
		}
		w = append(w, fmt.Sprintf("%s: side is empty (no sample has a non-zero %s)", label, typ))
	} else if noise && t.Samples < LowSamples {
		w = append(w, fmt.Sprintf("%s: only %d samples; deltas within two standard errors of sampling noise are marked ~", label, t.Samples))
	}
	if len(m.kinds) > 1 {
		w = append(w, fmt.Sprintf("%s: mixes profile kinds %s", label, kindList(m.kinds)))
	}
	if periodsDiffer(m.periods) {
		w = append(w, fmt.Sprintf("%s: profiles have different sampling periods (%s); merged values weigh them unequally", label, periodList(m.periods)))
	}
	return w
}

// heapWarning is said once, whichever sides are heap profiles.
func (a *Analyzer) heapWarning() []string {
	if a.sides[result.Base].kind == profile.KindHeap || a.sides[result.New].kind == profile.KindHeap {
		return []string{"heap profiles: buckets describe where memory was allocated, not where time went"}
	}
	return nil
}

// periodsDiffer reports whether a side's sampling periods differ by more
// than 10% (see the cross-side check in Diff).
func periodsDiffer(m map[int64]bool) bool {
	lo, hi := int64(math.MaxInt64), int64(0)
	for p := range m {
		lo, hi = min(lo, p), max(hi, p)
	}
	return len(m) > 1 && float64(hi) > 1.1*float64(lo)
}

func kindList(m map[profile.Kind]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, string(k))
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

func periodList(m map[int64]bool) string {
	var ps []int64
	for p := range m {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.FormatInt(p, 10)
	}
	return strings.Join(s, ", ")
}

// RecordsRatio is how many times more sampled events one side may have
// than the other before a warning says their noise differs.
const RecordsRatio = 4

// recordsDiffer says whether one side's sampled events, rb or rn, are
// more than RecordsRatio times the other's (both non-zero). It divides
// rather than multiplies: counts summed from a profile's values may lie
// near the int64 maximum, where RecordsRatio times them wraps negative.
func recordsDiffer(rb, rn int64) bool {
	hi, lo := max(rb, rn), min(rb, rn)
	return lo > 0 && (hi-1)/RecordsRatio >= lo // hi > RecordsRatio*lo
}

// UnknownShare is the share of all recorded time, on either side, of
// native-or-blocked time no frame places (Result.Unknown) from which the
// verdict says the buckets leave it out.
const UnknownShare = 0.05

// crossWarnings compares the two sides of r: kinds, periods, durations,
// thread counts, sample counts, producers and, for mutex profiles, Go
// versions; one warning each, saying what the difference means for the
// numbers.
func (a *Analyzer) crossWarnings(r *result.Result, rt *rates) []string {
	base, nw := &a.sides[result.Base], &a.sides[result.New]
	var w []string
	if base.kind != "" && nw.kind != "" && base.kind != nw.kind {
		w = append(w, fmt.Sprintf("profile kinds differ: base is %s, new is %s; their values measure different things and only shares are compared", base.kind, nw.kind))
	}
	// fgprof and other wall-clock writers report a measured period that
	// wobbles by a few percent between runs; only a real difference in
	// sampling rate is worth a warning.
	if base.period != 0 && nw.period != 0 && float64(max(base.period, nw.period)) > 1.1*float64(min(base.period, nw.period)) {
		w = append(w, fmt.Sprintf("sampling periods differ: base %d, new %d (%s); each sample stands for its period, so values, shares and rates compare, but the coarser side is noisier", base.period, nw.period, base.periodType))
	}
	if db, dn := r.Base.DurationNanos, r.New.DurationNanos; db > 0 && dn > 0 {
		if ratio := float64(max(db, dn)) / float64(min(db, dn)); ratio > 1.25 {
			w = append(w, fmt.Sprintf("profile durations differ: base %.3gs, new %.3gs; shares and rates compare, raw values do not", float64(db)/1e9, float64(dn)/1e9))
		}
	}
	if tb, tn := len(base.threads), len(nw.threads); tb > 0 && tn > 0 && tb != tn {
		what := "shares do not compare"
		if rt.known() {
			what = "rates (average threads in each state) compare, shares do not"
		}
		w = append(w, fmt.Sprintf("thread counts differ: base %d threads, new %d; thread time is the sum over threads, so a side with more (often idle) threads gives each state a different share: %s", tb, tn, what))
	}
	if rb, rn := r.Base.Records, r.New.Records; recordsDiffer(rb, rn) {
		w = append(w, fmt.Sprintf("sample counts differ: base %d samples, new %d; the smaller side's numbers are noisier (the ~ marks account for it)", rb, rn))
	}
	if base.format != "" && nw.format != "" && base.format != nw.format {
		w = append(w, fmt.Sprintf("producers differ: base is %s, new is %s; they may sample, name and attribute frames differently, so part of any change may be the tool's", base.format, nw.format))
	}
	if r.Kind == profile.KindMutex {
		if msg := mutexVersionWarning(r.Base.GoVersion, r.New.GoVersion); msg != "" {
			w = append(w, msg)
		}
	}
	return w
}

// mutexScaling is the Go release from which mutex profiles scale a
// contention's delay by the number of goroutines it blocked
// (golang/go#61015).
const mutexScaling = "go1.22"

// mutexVersionWarning warns when two Go versions lie on either side of
// mutexScaling (nothing when either is unknown or unreadable).
func mutexVersionWarning(base, new string) string {
	vb, vn := goLang(base), goLang(new)
	if vb == "" || vn == "" {
		return ""
	}
	if (version.Compare(vb, mutexScaling) < 0) == (version.Compare(vn, mutexScaling) < 0) {
		return ""
	}
	return fmt.Sprintf("Go versions differ across %s: base %s, new %s; from Go 1.22 a mutex profile scales each contention's delay by the number of goroutines it blocked (golang/go#61015), so the delay of the two sides is not comparable", mutexScaling, base, new)
}

// goLang reads a Go version as go/version does ("go1.22.3", "go1.22rc1",
// "devel go1.23-abc ..." gives go1.23), "" when it is none.
func goLang(v string) string {
	if i := strings.Index(v, "go1"); i >= 0 {
		v = v[i:]
	}
	if f := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '-' }); len(f) > 0 {
		v = f[0]
	}
	if !version.IsValid(v) {
		return ""
	}
	return v
}
