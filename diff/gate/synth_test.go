package gate

import (
	"fmt"
	"math"
	"math/rand"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// synthStacks are one stack (leaf first) per bucket of a small Go service,
// in rules.Buckets order, each classified by the built-in rules into that
// bucket (TestSynthStacksClassify checks).
var synthStacks = [rules.NumBuckets][]string{
	{"main.compute", "main.handle", "main.worker", "runtime.goexit"},
	{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.waitForWork", "main.worker", "runtime.goexit"},
	{"runtime.gopark", "runtime.semacquire1", "internal/sync.runtime_SemacquireMutex", "internal/sync.(*Mutex).lockSlow", "sync.(*Mutex).Lock", "main.(*cache).get", "main.handle", "main.worker", "runtime.goexit"},
	{"runtime.gcDrain", "runtime.gcBgMarkWorker.func2", "runtime.systemstack", "runtime.gcBgMarkWorker", "runtime.goexit"},
	{"runtime.gopark", "runtime.netpollblock", "internal/poll.runtime_pollWait", "internal/poll.(*pollDesc).wait", "net.(*conn).Read", "main.serve", "runtime.goexit"},
	{"syscall.Syscall", "syscall.write", "os.(*File).Write", "main.logLine", "main.handle", "main.worker", "runtime.goexit"},
}

var testRules = rules.Default()

// synthShares are the true bucket shares of the synthetic service.
var synthShares = [rules.NumBuckets]float64{0.50, 0.30, 0.02, 0.05, 0.10, 0.03}

// synthConfig draws profiles of the synthetic service: each profile's true
// shares are the given ones times a run-to-run factor exp(N(0, Jitter))
// (renormalized), and Samples samples are drawn from them.
type synthConfig struct {
	Shares  [rules.NumBuckets]float64
	Samples int
	Jitter  float64
}

func defaultSynth() synthConfig {
	return synthConfig{Shares: synthShares, Samples: 2000, Jitter: 0.1}
}

// shift returns c with d (a share, e.g. 0.01 for 1pp) moved from cpu to b.
func (c synthConfig) shift(b rules.Bucket, d float64) synthConfig {
	c.Shares[b] += d
	c.Shares[rules.CPU] -= d
	return c
}

// draw makes one profile, fgprof-like (wall-clock, 10ms per sample).
func (c synthConfig) draw(rng *rand.Rand, source string) *profile.Loaded {
	var w [rules.NumBuckets]float64
	sum := 0.0
	for i, s := range c.Shares {
		w[i] = s * math.Exp(rng.NormFloat64()*c.Jitter)
		sum += w[i]
	}
	var counts [rules.NumBuckets]int64
	for range c.Samples {
		u := rng.Float64() * sum
		i := 0
		for ; i < rules.NumBuckets-1 && u >= w[i]; i++ {
			u -= w[i]
		}
		counts[i]++
	}
	return &profile.Loaded{Source: source, Format: "pprof", Kind: profile.KindWall, Profile: synthProfile(counts)}
}

// synthProfile builds a wall-clock profile with counts[b] samples on the
// stack of bucket b.
func synthProfile(counts [rules.NumBuckets]int64) *pprofile.Profile {
	p := &pprofile.Profile{
		SampleType:    []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "time", Unit: "nanoseconds"}},
		PeriodType:    &pprofile.ValueType{Type: "wallclock", Unit: "nanoseconds"},
		Period:        10_000_000,
		DurationNanos: 1e9,
	}
	fns := map[string]*pprofile.Function{}
	locs := map[string]*pprofile.Location{}
	loc := func(name string) *pprofile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		f := &pprofile.Function{ID: uint64(len(fns) + 1), Name: name, SystemName: name}
		fns[name] = f
		p.Function = append(p.Function, f)
		l := &pprofile.Location{ID: uint64(len(locs) + 1), Line: []pprofile.Line{{Function: f}}}
		locs[name] = l
		p.Location = append(p.Location, l)
		return l
	}
	for b, st := range synthStacks {
		if counts[b] == 0 {
			continue
		}
		s := &pprofile.Sample{Value: []int64{counts[b], counts[b] * 10_000_000}}
		for _, name := range st {
			s.Location = append(s.Location, loc(name))
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// runSynth builds a gate over n profiles per side drawn from base and new.
func runSynth(rng *rand.Rand, opts Options, n int, base, new synthConfig) (*Report, error) {
	if opts.Analysis.Rules == nil {
		opts.Analysis.Rules = testRules // parsed once, not per trial
	}
	g := New(opts)
	for side, c := range []synthConfig{base, new} {
		for i := range n {
			if err := g.Add(result.Side(side), c.draw(rng, fmt.Sprintf("%s-%d.pb.gz", result.Side(side), i+1))); err != nil {
				return nil, err
			}
		}
	}
	return g.Report()
}

func mustChecks(specs ...string) []Check {
	var cs []Check
	for _, s := range specs {
		var c Check
		var err error
		if name, _, _ := cutLast(s); isBucketName(name) {
			c, err = ParseMax(s)
		} else {
			c, err = ParseMaxMethod(s)
		}
		if err != nil {
			panic(err)
		}
		cs = append(cs, c)
	}
	return Merge(nil, cs)
}

func cutLast(s string) (string, string, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func isBucketName(s string) bool {
	if s == SyncName {
		return true
	}
	_, err := rules.ParseBucket(s)
	return err == nil
}
