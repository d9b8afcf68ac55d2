package profile

import (
	"context"
	"errors"
	"strings"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/fleet"
)

// fetchFleet reads a fleet source (pyroscope+http://..., parca+http://...;
// see package fleet): the server's merged profile of the query over the
// range, as pprof bytes.
func fetchFleet(ctx context.Context, source string, maxSize int64, opts Options) ([]byte, error) {
	s, err := fleet.Parse(source, time.Now())
	if err != nil {
		return nil, err
	}
	data, err := fleet.Fetch(ctx, s, fleet.Options{Client: opts.HTTPClient, MaxSize: maxSize, CheckURL: opts.CheckURL, Getenv: opts.Getenv, Decompress: Decompress})
	if errors.Is(err, fleet.ErrEmpty) {
		err = mark(ErrEmpty, err)
	}
	return data, err
}

// applyFleet gives a profile read from a fleet source the query's range
// as its time and duration: a merged profile carries none (Pyroscope
// answers period 1e9 and no duration, Parca period 0), and rates need one.
func applyFleet(l *Loaded) {
	s, err := fleet.Parse(l.Source, time.Now())
	if err != nil || l.Profile == nil {
		return
	}
	l.Profile.TimeNanos = s.From.UnixNano()
	l.Profile.DurationNanos = s.Window().Nanoseconds()
}

// DropGoTypeArgs removes the type arguments Go names its generic
// functions' instantiations with ("slices.partitionOrdered[go.shape.int]",
// "pkg.Map[...]") from every function's name, so that a profile from
// Pyroscope, which drops them, and one that keeps them name one function
// alike. Only brackets holding go.shape. arguments or "..." are removed:
// C++'s operator[] and Rust's <[T]> keep theirs.
func DropGoTypeArgs(p *pprofile.Profile) {
	for _, f := range p.Function {
		f.Name = dropTypeArgs(f.Name)
		f.SystemName = dropTypeArgs(f.SystemName)
	}
}

func dropTypeArgs(name string) string {
	if !strings.Contains(name, "[go.shape.") && !strings.Contains(name, "[...]") {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if name[i] == '[' {
			if end := matchBracket(name, i); end > 0 {
				arg := name[i+1 : end]
				if arg == "..." || strings.HasPrefix(arg, "go.shape.") {
					i = end
					continue
				}
			}
		}
		b.WriteByte(name[i])
	}
	return b.String()
}

// matchBracket is the index of the ']' closing the '[' at i, or -1.
func matchBracket(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}
