package diff

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixge/fgprof"
	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// TestSerialShardedAgree holds the classification to being a function of
// the sample and its profile's facts: a serial walk (an OnSample consumer
// keeps it on the caller's goroutine, in order) and a walk cut into many
// shards give the same results, byte for byte, whatever each met first,
// on inputs where memos by method used to let them differ:
//
//   - kinds: a Go CPU profile beside a wall-clock one (fgprof) of the same
//     goroutines, with a user rule on their function that applies to
//     wall-clock profiles only (a method's rule depends on the profile's
//     kind);
//   - modules: a perf recording of native threads, once with its
//     mappings and once as a converter that keeps none writes it (the
//     same functions met in libc and without a module: --by caller's
//     library class is the frame's own).
//
// Every option that reads the results differently is compared: the
// tables (by frame, caller, decider, cum), the call tree the pictures
// draw, --peek and --focus/--ignore. The renderers are functions of
// these results.
func TestSerialShardedAgree(t *testing.T) {
	t.Run("kinds", func(t *testing.T) {
		cpu, wall := contendedGoProfiles(t)
		user, err := rules.Parse("wall-only.rules", strings.NewReader(
			"go\twait\tstrong,kind=wall\trecordContended\\.func\twall-clock only: a user's rule\n"))
		if err != nil {
			t.Fatal(err)
		}
		rs := rules.Default().WithUserRules(user)
		dir := t.TempDir()
		sides := [2][]*profile.Raw{
			{rawFile(t, dir, "cpu.pb", cpu, profile.Options{}), rawFile(t, dir, "wall.pb", wall, profile.Options{})},
			{rawFile(t, dir, "wall2.pb", wall, profile.Options{}), rawFile(t, dir, "cpu2.pb", cpu, profile.Options{})},
		}
		agree(t, sides, Options{Rules: rs, SampleIndex: "samples"}, `recordContended\.func`)
	})
	t.Run("modules", func(t *testing.T) {
		p := recordNativeWaits(t)
		bare := p.Copy()
		for _, l := range bare.Location {
			l.Mapping = nil
		}
		bare.Mapping = nil
		dir := t.TempDir()
		sides := [2][]*profile.Raw{
			{rawFile(t, dir, "mapped.pb", p, profile.Options{})},
			{rawFile(t, dir, "bare.pb", bare, profile.Options{}), rawFile(t, dir, "mapped2.pb", p, profile.Options{})},
		}
		agree(t, sides, Options{}, `start_thread|read`)
	})
	t.Run("variants", func(t *testing.T) {
		// Build variants of one function (work, work.part.0): a method
		// of two spellings, so spelling ids and method ids part, as a
		// shard's tree of frames must remap them.
		p := recordClones(t).Profile
		dir := t.TempDir()
		sides := [2][]*profile.Raw{
			{rawFile(t, dir, "clones.pb", p, profile.Options{})},
			{rawFile(t, dir, "clones2.pb", p, profile.Options{}), rawFile(t, dir, "clones3.pb", p, profile.Options{})},
		}
		agree(t, sides, Options{}, `work`)
	})
}

// agree compares a serial and a sharded walk of sides under every option
// set; peek is the --peek pattern.
func agree(t *testing.T, sides [2][]*profile.Raw, base Options, peek string) {
	t.Helper()
	for _, c := range []struct {
		name string
		set  func(*Options)
	}{
		{"by frame", func(o *Options) { o.By = result.ByFrame }},
		{"by caller", func(o *Options) { o.By = result.ByCaller }},
		{"by decider", func(o *Options) { o.By = result.ByDecider }},
		{"cum", func(o *Options) { o.Cum = true }},
		{"tree", func(o *Options) { o.CallTree = true }},
		{"tree of frames", func(o *Options) { o.CallTree, o.TreeFrames = true, true }},
		{"peek", func(o *Options) { o.Peek = regexp.MustCompile(peek) }},
		{"focus", func(o *Options) { o.Focus = regexp.MustCompile(peek) }},
		{"ignore", func(o *Options) { o.Ignore = regexp.MustCompile(peek); o.CallTree = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := base
			opts.Top = -1
			c.set(&opts)
			serial := walkAll(t, sides, opts, false)
			sharded := walkAll(t, sides, opts, true)
			sameJSON(t, "diff", serial.Diff(), sharded.Diff())
			sameJSON(t, "top", serial.Top(), sharded.Top())
			sameJSON(t, "profiles", serial.Profiles(), sharded.Profiles())
		})
	}
}

// walkAll adds sides' profiles to a new Analyzer: serially (an OnSample
// consumer reads the samples in order), or cut into parts of 16 records.
func walkAll(t *testing.T, sides [2][]*profile.Raw, opts Options, sharded bool) *Analyzer {
	t.Helper()
	if sharded {
		opts = cutFine(opts)
	}
	a := NewAnalyzer(opts)
	if !sharded {
		a.OnSample(func(*Sample) {})
	}
	for side, rs := range sides {
		for _, r := range rs {
			in, err := PrepareWith(r, prepFor(opts, a.WalksInParallel()))
			if err != nil {
				t.Fatalf("Prepare %s: %v", r.Source, err)
			}
			if !in.Streamed() {
				t.Fatalf("%s was not streamed", r.Source)
			}
			if err := a.AddInput(result.Side(side), in); err != nil {
				t.Fatalf("AddInput %s: %v", r.Source, err)
			}
		}
	}
	if err := a.Wait(); err != nil {
		t.Fatal(err)
	}
	if a.WalksInParallel() != sharded {
		t.Fatalf("walks in parallel: %v, want %v", a.WalksInParallel(), sharded)
	}
	return a
}

// contendedGoProfiles returns a CPU profile (runtime/pprof) and a
// wall-clock one (fgprof) of goroutines that contend for one mutex: the
// pair recordContended recorded for the first test that asked, parsed
// anew for each caller.
func contendedGoProfiles(t *testing.T) (cpu, wall *pprofile.Profile) {
	t.Helper()
	data := contended.get(t, recordContended)
	var err error
	if cpu, err = pprofile.ParseData(data[0]); err != nil {
		t.Fatalf("CPU profile: %v", err)
	}
	if wall, err = pprofile.ParseData(data[1]); err != nil {
		t.Fatalf("fgprof profile: %v", err)
	}
	return cpu, wall
}

var contended recording

// recordContended records, in this process, a CPU profile and a
// wall-clock one of goroutines that contend for one mutex, long enough
// for both to hold their samples, and returns the two as written.
func recordContended(t *testing.T) [][]byte {
	t.Helper()
	var cpuBuf, wallBuf bytes.Buffer
	if err := pprof.StartCPUProfile(&cpuBuf); err != nil {
		t.Skipf("CPU profiling is in use: %v", err)
	}
	stopWall := fgprof.Start(&wallBuf, fgprof.FormatPprof)
	var mu sync.Mutex
	var wg sync.WaitGroup
	deadline := time.Now().Add(400 * time.Millisecond)
	sink := make([]uint64, runtime.GOMAXPROCS(0)*2)
	for g := range sink {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline) && i < 1e7; i++ {
				mu.Lock()
				for j := range 2000 {
					sink[g] += uint64(j * i)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	pprof.StopCPUProfile()
	if err := stopWall(); err != nil {
		t.Fatalf("fgprof: %v", err)
	}
	data := [][]byte{cpuBuf.Bytes(), wallBuf.Bytes()}
	for i, name := range []string{"cpu", "wall"} {
		p, err := pprofile.ParseData(data[i])
		if err != nil {
			t.Fatalf("%s profile: %v", name, err)
		}
		if !hasFrame(p, contendedFunc) {
			t.Skipf("the %s profile caught none of the goroutines in 400 ms", name)
		}
	}
	return data
}

// contendedFunc is the contending goroutines' function.
const contendedFunc = "github.com/profdiff/profdiff/diff.recordContended.func1"

// hasFrame reports whether a function of that name is on a sample's stack.
func hasFrame(p *pprofile.Profile, name string) bool {
	for _, s := range p.Sample {
		for _, l := range s.Location {
			for _, ln := range l.Line {
				if ln.Function != nil && ln.Function.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// recordNativeWaits is recordLibcWaits' profile, which must have the
// mappings the module case is about.
func recordNativeWaits(t *testing.T) *pprofile.Profile {
	t.Helper()
	l := recordLibcWaits(t)
	if len(l.Profile.Mapping) == 0 {
		t.Fatal("perf script's profile has no mappings: the module case needs them")
	}
	return l.Profile
}

// A call tree large enough that its build sends subtrees to other
// goroutines (parallelRecords) is the tree a build on one goroutine
// makes.
func TestTreeBuildParallelSame(t *testing.T) {
	dir := t.TempDir()
	var sides [2][]*profile.Raw
	for s, side := range []synth.Side{synth.Base, synth.New} {
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Functions, cfg.Side = 30000, 400, side
		sides[s] = []*profile.Raw{rawFile(t, dir, fmt.Sprintf("%d.pb.gz", s), synth.Generate(cfg), profile.Options{})}
	}
	a := walkAll(t, sides, Options{CallTree: true, TreeMin: 0.0001}, true)
	a.flush() // the shards' trees merged
	if a.tree.n < 4*parallelRecords {
		t.Fatalf("%d records: the test wants several subtrees past parallelRecords", a.tree.n)
	}
	build := func(procs int) *result.CallNode {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return a.Diff().Tree
	}
	one, four := build(1), build(4)
	sameJSON(t, "tree", one, four)
}

// A tree keeps ids in 16 bits while they fit, and a shard's chunk whose
// ids the merge turns into larger ones is widened, not cut short.
func TestTreeChunkWidens(t *testing.T) {
	shard := newCallTree(false)
	shard.addStack([]int32{1, 2, 3}, rules.CPU, result.Base, 1, true)
	if shard.ids[0].u16 == nil {
		t.Fatal("a stack of small ids went to a 32-bit chunk")
	}
	remap := []int32{0, 70000, 5, 1 << 20}
	tree := newCallTree(false)                                  // a tree that adopts the shard's chunks
	tree.addStack([]int32{7}, rules.Wait, result.New, 2, false) // a tree past 1<<16 methods
	tree.merge(shard, remap, false, result.Base, 0)
	if tree.n != 2 {
		t.Fatalf("%d records, want 2", tree.n)
	}
	r := tree.rec(1 << recShift) // the shard's block follows the tree's
	var got []int32
	for i := r.start; i < r.end; i++ {
		got = append(got, tree.ids[r.chunk].at(int(i)))
	}
	if !slices.Equal(got, []int32{70000, 5, 1 << 20}) || tree.ids[r.chunk].u32 == nil {
		t.Errorf("merged stack %v (32-bit: %v), want [70000 5 1048576] in a 32-bit chunk", got, tree.ids[r.chunk].u32 != nil)
	}
	if !tree.equal(tree.rec(0), []int32{7}) {
		t.Error("the tree's own record changed")
	}
}

// A tree that sums repeated stacks sums a shard's into its own records
// when it merges it, so that it holds the distinct stacks of every
// profile merged, not a record per profile (and per shard).
func TestTreeMergeSums(t *testing.T) {
	tree := newCallTree(true)
	remap := []int32{0, 70000, 5}
	for prof := range 3 {
		shard := newCallTree(false)
		shard.addStack([]int32{1, 2}, rules.CPU, result.Base, 1, true)
		shard.addStack([]int32{1, 2}, rules.CPU, result.New, 4, true)
		shard.addStack([]int32{2}, rules.CPU, result.Base, 2, true)
		tree.merge(shard, remap, false, result.Base, prof)
	}
	if tree.n != 3 {
		t.Fatalf("%d records after merging 3 shards of 3 stacks, want 3", tree.n)
	}
	want := [][]int32{{70000, 5}, {70000, 5}, {5}}
	vals := []float64{3, 12, 6}
	for i := range int32(3) {
		r := tree.rec(i)
		if got := tree.stackOf(nil, r, nil); !slices.Equal(got, want[i]) || r.value != vals[i] {
			t.Errorf("record %d: %v = %v, want %v = %v", i, got, r.value, want[i], vals[i])
		}
	}
	// A tree adopted whole is indexed: a later merge sums into it.
	tree.index()
	shard := newCallTree(false)
	shard.addStack([]int32{2}, rules.CPU, result.Base, 1, true)
	tree.merge(shard, remap, false, result.Base, 3)
	if tree.n != 3 || tree.rec(2).value != 7 {
		t.Errorf("after index and merge: %d records, the last %v; want 3, 7", tree.n, tree.rec(2).value)
	}
}

// The shards of a side's first profile are adopted whole, unindexed
// (their samples rarely repeat a stack, and copying them into the tree
// costs the pictures their time); a second profile's shard of that side
// is summed into them, and a first profile of the other side adopted.
func TestTreeMergeAdoptsFirstProfile(t *testing.T) {
	tree := newCallTree(true)
	remap := []int32{0, 1, 2}
	shardOf := func(side result.Side, v float64) *CallTree {
		s := newCallTree(false)
		s.addStack([]int32{1, 2}, rules.CPU, side, v, true)
		return s
	}
	tree.merge(shardOf(result.Base, 1), remap, true, result.Base, 0)
	tree.merge(shardOf(result.Base, 2), remap, true, result.Base, 0)
	if tree.n != 2 || !tree.stale {
		t.Fatalf("two shards of one profile: %d records (stale %v), want 2 adopted unindexed", tree.n, tree.stale)
	}
	tree.merge(shardOf(result.Base, 4), remap, true, result.Base, 1)
	second := tree.rec(1 << recShift) // each adopted shard's block is a block of the tree
	if tree.n != 2 || tree.stale || tree.rec(0).value != 1+4 || second.value != 2 {
		t.Fatalf("a second profile's shard: %d records, values %v %v (stale %v); want 2 records, 5 and 2, indexed",
			tree.n, tree.rec(0).value, second.value, tree.stale)
	}
	tree.merge(shardOf(result.New, 8), remap, true, result.New, 0)
	if tree.n != 3 || tree.owner[result.New] != 1 || tree.owner[result.Base] != -1 {
		t.Errorf("the other side's first profile: %d records, owners %v; want 3, [-1 1]", tree.n, tree.owner)
	}
}
