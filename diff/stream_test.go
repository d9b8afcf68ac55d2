package diff

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	pprofile "github.com/google/pprof/profile"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
	"github.com/profdiff/profdiff/profile/synth"
)

// rawFile writes p (gzipped, as pprof writes it) and reads it back as a
// profile.Raw.
func rawFile(t testing.TB, dir, name string, p *pprofile.Profile, opts profile.Options) *profile.Raw {
	t.Helper()
	path := filepath.Join(dir, name)
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, l, err := profile.LoadRaw(context.Background(), path, opts)
	if err != nil || r == nil {
		t.Fatalf("LoadRaw %s: %v, loaded %v", name, err, l != nil)
	}
	return r
}

// bothPaths adds the profiles of each side to two Analyzers, one through
// the pprof model (Raw.Load, Add) and one through the streaming decoder
// (PrepareWith, AddInput), and returns them; every input must stream. The
// inputs are prepared as diff and top prepare them: for an Analyzer that
// walks in parallel, with the ids left to the walk (IDsInWalk), and so
// the records not read again when scan checked them (check).
func bothPaths(t *testing.T, opts Options, sides [2][]*profile.Raw) (model, stream *Analyzer) {
	t.Helper()
	model, stream = NewAnalyzer(opts), NewAnalyzer(opts)
	for side, rs := range sides {
		for _, r := range rs {
			l, err := pull.Load(r)
			if err != nil {
				t.Fatalf("model path: %v", err)
			}
			if err := model.Add(result.Side(side), l); err != nil {
				t.Fatalf("model Add: %v", err)
			}
			in, err := PrepareWith(r, prepFor(opts, stream.WalksInParallel()))
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if !in.Streamed() {
				t.Fatalf("%s was not streamed", r.Source)
			}
			if err := stream.AddInput(result.Side(side), in); err != nil {
				t.Fatalf("AddInput: %v", err)
			}
		}
	}
	return model, stream
}

// sameJSON fails when a and b differ as JSON, showing where.
func sameJSON(t *testing.T, what string, a, b any) {
	t.Helper()
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: marshal: %v %v", what, err1, err2)
	}
	if !bytes.Equal(ja, jb) {
		i := 0
		for i < len(ja) && i < len(jb) && ja[i] == jb[i] {
			i++
		}
		lo := max(0, i-120)
		t.Fatalf("%s: the streaming path differs at byte %d:\nmodel:  %s\nstream: %s", what, i, ja[lo:min(len(ja), i+120)], jb[lo:min(len(jb), i+120)])
	}
}

// TestStreamSameResult holds the streaming decoder to the pprof model's
// results: the diff (with every analysis option that changes what is
// read), top, and the per-profile observations, on generated profiles of
// several shapes.
func TestStreamSameResult(t *testing.T) {
	dir := t.TempDir()
	gen := func(side synth.Side, stacks, pcs int, seed int64) *pprofile.Profile {
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Functions, cfg.Side, cfg.PCsPerFunction, cfg.Seed = stacks, 300, side, pcs, seed
		return synth.Generate(cfg)
	}
	var sides [2][]*profile.Raw
	for i := range 3 {
		for s, side := range []synth.Side{synth.Base, synth.New} {
			p := gen(side, 1500+500*i, i%2, int64(i+1))
			if i == 1 {
				p = synth.Labelled(p)
			}
			sides[s] = append(sides[s], rawFile(t, dir, fmt.Sprintf("%d-%d.pb.gz", s, i), p, profile.Options{}))
		}
	}
	for _, rs := range sides {
		for _, r := range rs {
			l, err := pull.Load(r)
			in, perr := Prepare(r)
			if err != nil || perr != nil || !in.Streamed() {
				t.Fatalf("%s: model %v, stream %v (streamed: %v)", r.Source, err, perr, perr == nil && in.Streamed())
			}
			sameLocations(t, r.Source, l.Profile, in)
		}
	}
	for _, sharded := range []bool{false, true} {
		testStreamSameResult(t, sides, sharded)
	}
}

// fine cuts streamed profiles into many small shards (parallel.go):
// parts of 100 records, at places every 16, at most 7 parts a profile, so
// that the merging of parts is what is tested.
var fine = shardPlan{records: 100, markEvery: 16, most: 7}

// cutFine is opts with profiles cut as fine says.
func cutFine(opts Options) Options {
	opts.shards = fine
	return opts
}

// prepFor is how profiles for an Analyzer made with opts are prepared:
// the ids left to the walk when ids, cut places as opts' plan has them.
func prepFor(opts Options, ids bool) PrepareOptions {
	return PrepareOptions{IDsInWalk: ids, markEvery: opts.shards.markEvery}
}

func testStreamSameResult(t *testing.T, sides [2][]*profile.Raw, sharded bool) {
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"default", Options{}},
		{"cum", Options{Cum: true, Top: -1}},
		{"by caller", Options{By: result.ByCaller, Top: -1}},
		{"by decider", Options{By: result.ByDecider}},
		{"focus and ignore", Options{Focus: regexp.MustCompile(`main\.`), Ignore: regexp.MustCompile(`func1$`), Top: -1}},
		{"call tree", Options{CallTree: true, TreeMin: 0.001}},
		{"sample index", Options{SampleIndex: "samples", Spellings: true, Peek: regexp.MustCompile(`runtime\.mallocgc`)}},
		{"kind", Options{Kind: profile.KindWall}},
	} {
		name := c.name
		if sharded {
			name += "/sharded"
		}
		t.Run(name, func(t *testing.T) {
			opts := c.opts
			if sharded {
				opts = cutFine(opts)
			}
			model, stream := bothPaths(t, opts, sides)
			sameJSON(t, "diff", model.Diff(), stream.Diff())
			sameJSON(t, "top", model.Top(), stream.Top())
			sameJSON(t, "profiles", model.Profiles(), stream.Profiles())
			if c.opts.CallTree {
				sameJSON(t, "tree", model.Diff().Tree, stream.Diff().Tree)
			}
		})
	}
}

// TestStreamCorpus holds the streaming decoder to the model path on every
// pprof protobuf of the shared corpus (skipped when absent): the same
// top, or, when the decoder leaves a file to the model path, the same
// load. The streamed walks are cut into parts of 16 records.
func TestStreamCorpus(t *testing.T) {
	dir := corpusDir(t)
	fineOpts := cutFine(Options{Top: -1}) // each profile's walk is cut into parts
	n, streamed := 0, 0
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".tsv") {
			return err
		}
		for _, opts := range []profile.Options{{AllowEmpty: true}, {KeepProfiler: true}} {
			r, _, err := profile.LoadRaw(context.Background(), path, opts)
			if err != nil || r == nil {
				return nil // not a protobuf: not the decoder's
			}
			n++
			l, lerr := pull.Load(r)
			// LoadRaw then Load is Load.
			if want, werr := profile.Load(context.Background(), path, opts); fmt.Sprint(werr) != fmt.Sprint(lerr) {
				t.Errorf("%s: Load: %v, LoadRaw and Raw.Load: %v", path, werr, lerr)
			} else if werr == nil {
				sameJSON(t, path+" Load", loadFacts(want), loadFacts(l))
			}
			in, perr := PrepareWith(r, prepFor(fineOpts, false))
			if (lerr == nil) != (perr == nil) || lerr != nil && lerr.Error() != perr.Error() {
				t.Errorf("%s: model %v, stream %v", path, lerr, perr)
				continue
			}
			if lerr != nil {
				continue
			}
			if in.Streamed() {
				streamed++
				sameLocations(t, path, l.Profile, in)
			}
			sameJSON(t, path+" loaded", loadFacts(l), loadFacts(in.Loaded()))
			model, stream := NewAnalyzer(Options{Top: -1}), NewAnalyzer(fineOpts)
			e1, e2 := model.Add(result.Base, l), stream.AddInput(result.Base, in)
			if fmt.Sprint(e1) != fmt.Sprint(e2) {
				t.Errorf("%s: Add: model %v, stream %v", path, e1, e2)
				continue
			}
			if e1 == nil {
				sameJSON(t, path, model.Top(), stream.Top())
			}
			// Prepared as diff and top prepare it, for a walk in
			// parallel: ids left to the walk, and the records not read
			// again when scan checked them.
			inW, err := PrepareWith(r, prepFor(fineOpts, true))
			if err != nil {
				t.Errorf("%s: PrepareWith IDsInWalk: %v, Prepare took it", path, err)
				continue
			}
			sameJSON(t, path+" loaded, ids in walk", loadFacts(l), loadFacts(inW.Loaded()))
			par := NewAnalyzer(fineOpts)
			e3 := par.AddInput(result.Base, inW)
			if e3 == nil {
				e3 = par.Wait()
			}
			if fmt.Sprint(e1) != fmt.Sprint(e3) {
				t.Errorf("%s: Add: model %v, stream with ids in walk %v", path, e1, e3)
			} else if e1 == nil {
				sameJSON(t, path+" ids in walk", model.Top(), par.Top())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d corpus protobufs, %d streamed", n, streamed)
	if n > 0 && streamed == 0 {
		t.Error("no corpus profile took the streaming path")
	}
}

// loadFacts is what a Loaded says besides its model.
func loadFacts(l *profile.Loaded) any {
	p := l.Profile
	return map[string]any{"format": l.Format, "containers": l.Containers, "kind": l.Kind, "dropped": l.Dropped,
		"warnings": l.Warnings, "types": SampleTypes(p), "default": p.DefaultSampleType, "period": p.Period,
		"duration": p.DurationNanos, "comments": p.Comments, "build": mainBuildID(p)}
}

// corpusDir is the shared corpus folder next to the module root; the test
// skips when it is absent.
func corpusDir(t *testing.T) string {
	c := filepath.Join("..", "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(c, "index.tsv")); err != nil {
		t.Skip("no ../shared/corpus beside the module: corpus test skipped")
	}
	return c
}

// TestPrepareConcurrent prepares several profiles at once, as the
// commands do, and adds them in order: the same top as one at a time
// (run it with -race).
func TestPrepareConcurrent(t *testing.T) {
	dir := t.TempDir()
	var rs []*profile.Raw
	for i := range 4 {
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Functions, cfg.Seed = 800, 200, int64(i+1)
		rs = append(rs, rawFile(t, dir, fmt.Sprintf("%d.pb.gz", i), synth.Labelled(synth.Generate(cfg)), profile.Options{}))
	}
	ins := make([]*Input, len(rs))
	errs := make([]error, len(rs))
	done := make(chan int)
	for i, r := range rs {
		go func() { ins[i], errs[i] = Prepare(r); done <- i }()
	}
	for range rs {
		<-done
	}
	serial, parallel := NewAnalyzer(Options{Top: -1}), NewAnalyzer(Options{Top: -1})
	for i, r := range rs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		in, err := Prepare(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := serial.AddInput(result.Base, in); err != nil {
			t.Fatal(err)
		}
		if err := parallel.AddInput(result.Base, ins[i]); err != nil {
			t.Fatal(err)
		}
	}
	sameJSON(t, "top", serial.Top(), parallel.Top())
}

// locFacts is what the analysis can read of a location: every field of
// it, its mapping's and its lines' functions'.
func locFacts(l *pprofile.Location) any {
	if l == nil {
		return nil
	}
	type fn struct {
		ID                         uint64
		Name, SystemName, Filename string
		StartLine, Line, Column    int64
	}
	out := struct {
		ID, Address uint64
		IsFolded    bool
		Mapping     *pprofile.Mapping
		Lines       []fn
	}{ID: l.ID, Address: l.Address, IsFolded: l.IsFolded, Mapping: l.Mapping}
	for _, ln := range l.Line {
		f := ln.Function
		out.Lines = append(out.Lines, fn{f.ID, f.Name, f.SystemName, f.Filename, f.StartLine, ln.Line, ln.Column})
	}
	return out
}

// sameLocations checks that every location the streaming decoder makes
// on demand (pbProfile.location) is the model's, made once: asked for
// from several goroutines at once, each gets one object.
func sameLocations(t *testing.T, what string, model *pprofile.Profile, in *Input) {
	t.Helper()
	d := in.d
	if d == nil {
		return
	}
	if len(model.Location) != d.Locations() {
		t.Errorf("%s: %d locations, the decoder has %d", what, len(model.Location), d.Locations())
		return
	}
	got := make([][]*pprofile.Location, 4)
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() {
			for _, l := range model.Location {
				got[g] = append(got[g], d.Location(l.ID))
			}
		})
	}
	wg.Wait()
	for i, l := range model.Location {
		for g := range got {
			if got[g][i] != got[0][i] {
				t.Fatalf("%s: location %d made twice", what, l.ID)
			}
		}
		sameJSON(t, fmt.Sprintf("%s location %d", what, l.ID), locFacts(l), locFacts(got[0][i]))
		if fn := got[0][i].Line; len(fn) > 0 {
			if in, ok := d.FuncOf(fn[0].Function); !ok || nameOf(in).rest == "" && fn[0].Function.Name != "" {
				t.Errorf("%s: location %d: no name for its function", what, l.ID)
			}
		}
	}
	if d.Location(d.MaxLocID()+1) != nil {
		t.Errorf("%s: a location for an ID the profile lacks", what)
	}
}

// streamed adds r to a new Analyzer through the streaming path, its
// location ids left to the walk (PrepareOptions.IDsInWalk), walked in
// parts (cutFine) or serially (an OnSample consumer), and returns the
// error that path gives it wherever it is found (Prepare's checks,
// AddInput, Wait), or the Analyzer. walked says whether Prepare streamed
// it, leaving the error, if any, to the walk.
func streamed(r *profile.Raw, serial bool) (a *Analyzer, walked bool, err error) {
	in, err := PrepareWith(r, prepFor(cutFine(Options{}), true))
	if err != nil {
		return nil, false, err
	}
	a = NewAnalyzer(cutFine(Options{}))
	if serial {
		a.OnSample(func(*Sample) {})
	}
	walked = in.Streamed()
	if err := a.AddInput(result.Base, in); err != nil {
		return nil, walked, err
	}
	if err := a.Wait(); err != nil {
		return nil, walked, err
	}
	return a, walked, nil
}

// A sample location ID that is no location's is refused with the model
// path's error: by Prepare's checks, or, when they leave the packed ids to
// the walk, by the walk, in a part of a profile walked in parallel or in
// the ids check a serial walk runs first.
func TestStreamBadLocationID(t *testing.T) {
	dir := t.TempDir()
	gcfg := synth.DefaultConfig()
	gcfg.Stacks, gcfg.Functions, gcfg.PCsPerFunction = 300, 100, 1
	good := rawFile(t, dir, "good.pb.gz", synth.Generate(gcfg), profile.Options{})
	// "of a zero sample": the walk leaves the sample out for its value,
	// but its ids are checked all the same.
	for _, c := range []struct {
		name string
		at   int
		id   uint64
	}{{"zero first", 0, 0}, {"zero inside", 3, 0}, {"past the table", 3, 1 << 20}, {"past by one", 0, 0}, {"of a zero sample", 5, 1 << 20}} {
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Functions, cfg.PCsPerFunction = 300, 100, 1
		p := synth.Generate(cfg)
		id := c.id
		if c.name == "past by one" {
			id = uint64(len(p.Location)) + 1
		}
		smp := p.Sample[len(p.Sample)/2]
		if c.name == "of a zero sample" {
			smp.Value = make([]int64, len(smp.Value))
		}
		locs := append([]*pprofile.Location(nil), smp.Location...)
		locs[c.at] = &pprofile.Location{ID: id}
		smp.Location = locs
		r := rawFile(t, dir, strings.ReplaceAll(c.name, " ", "-")+".pb.gz", p, profile.Options{})
		_, lerr := pull.Load(r)
		if lerr == nil {
			t.Fatalf("%s: the model took it", c.name)
		}
		if in, perr := Prepare(r); fmt.Sprint(lerr) != fmt.Sprint(perr) || perr == nil && in.Streamed() {
			t.Errorf("%s: model %v, Prepare %v", c.name, lerr, perr)
		}
		for _, serial := range []bool{false, true} {
			_, walked, serr := streamed(r, serial)
			if fmt.Sprint(lerr) != fmt.Sprint(serr) || !walked {
				t.Errorf("%s, serial %v: model %v; stream %v (streamed %v)", c.name, serial, lerr, serr, walked)
			}
		}
		// A serial Analyzer refuses it before adding it: nothing of it is
		// kept. A parallel one finds it in the walk; once Wait said so,
		// it adds no more.
		for _, serial := range []bool{true, false} {
			a := NewAnalyzer(cutFine(Options{}))
			if serial {
				a.OnSample(func(*Sample) {})
			}
			in, err := PrepareWith(r, prepFor(cutFine(Options{}), true))
			if err != nil {
				t.Fatal(err)
			}
			aerr := a.AddInput(result.Base, in)
			if aerr == nil {
				aerr = a.Wait()
			}
			gin, err := Prepare(good)
			if err != nil {
				t.Fatal(err)
			}
			gerr := a.AddInput(result.New, gin)
			switch {
			case fmt.Sprint(aerr) != fmt.Sprint(lerr):
				t.Errorf("%s, serial %v: %v, want the model's error", c.name, serial, aerr)
			case serial && (len(a.Profiles()) != 1 || gerr != nil):
				t.Errorf("%s, serial: %d profiles kept, then %v; want the good one alone", c.name, len(a.Profiles()), gerr)
			case !serial && fmt.Sprint(gerr) != fmt.Sprint(lerr):
				t.Errorf("%s, parallel: the next profile was added (%v), want the refusal again", c.name, gerr)
			}
		}
		// Results asked for without Wait leave the profile out, and say so.
		in, err := PrepareWith(r, prepFor(cutFine(Options{}), true))
		if err != nil {
			t.Fatal(err)
		}
		a := NewAnalyzer(cutFine(Options{}))
		if err := a.AddInput(result.Base, in); err != nil {
			t.Fatal(err)
		}
		top := a.Top()
		if top.Total != 0 || !slices.Contains(top.Warnings, fmt.Sprint(lerr)+": its samples are left out") {
			t.Errorf("%s, no Wait: total %v, warnings %q", c.name, top.Total, top.Warnings)
		}
	}
}

// A sample whose packed location ids or values are cut a byte or two
// short (so that the last varint runs on into the next field's bytes),
// or whose last location id is made to run on past its field, gets what
// the model makes of it: the same error, or the same profile.
func TestStreamPackedVarintPastField(t *testing.T) {
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions, cfg.PCsPerFunction = 400, 300, 1
	var buf bytes.Buffer
	if err := synth.Generate(cfg).WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	// Where the packed fields of the first samples are: the offset of
	// each one's one-byte length.
	var lens, lastIDs []int
	for _, f := range wireFields(t, data, 0, len(data)) {
		if len(lens) >= 60 {
			break
		}
		if f.num != 2 || f.typ != protowire.BytesType {
			continue
		}
		for _, g := range wireFields(t, data, f.s, f.e) {
			if (g.num == 1 || g.num == 2) && g.typ == protowire.BytesType && g.e-g.s >= 3 && g.e-g.s < 0x80 && g.s == g.at+2 {
				lens = append(lens, g.at+1)
			}
			if g.num == 1 && g.typ == protowire.BytesType && g.e > g.s {
				lastIDs = append(lastIDs, g.e-1)
			}
		}
	}
	if len(lens) < 20 {
		t.Fatalf("only %d packed fields found", len(lens))
	}
	refused, walked := 0, 0
	type change struct {
		at  int
		cut byte // the length at is cut by this; 0: the byte at gets a continuation bit
	}
	var changes []change
	for _, at := range lens {
		changes = append(changes, change{at, 1}, change{at, 2})
	}
	for _, at := range lastIDs[:min(len(lastIDs), 20)] {
		changes = append(changes, change{at, 0})
	}
	for _, c := range changes {
		at, cut := c.at, c.cut
		bad := append([]byte(nil), data...)
		if cut > 0 {
			bad[at] -= cut
		} else {
			bad[at] |= 0x80
		}
		r, _, err := profile.LoadRaw(context.Background(), writeTemp(t, bad), profile.Options{})
		if err != nil || r == nil {
			continue // refused before either path
		}
		l, lerr := pull.Load(r)
		if lerr != nil {
			refused++
		}
		if _, perr := Prepare(r); fmt.Sprint(lerr) != fmt.Sprint(perr) {
			t.Errorf("byte %d cut by %d (0: made to run on): model %v, Prepare %v", at, cut, lerr, perr)
		}
		for _, serial := range []bool{false, true} {
			a, w, serr := streamed(r, serial)
			if w && lerr != nil {
				walked++
			}
			if fmt.Sprint(lerr) != fmt.Sprint(serr) {
				t.Errorf("byte %d cut by %d (0: made to run on), serial %v: model %v, stream %v", at, cut, serial, lerr, serr)
				continue
			}
			if lerr == nil {
				m := NewAnalyzer(cutFine(Options{}))
				if err := m.Add(result.Base, l); err != nil {
					t.Fatal(err)
				}
				sameJSON(t, fmt.Sprintf("top, byte %d cut by %d (0: made to run on), serial %v", at, cut, serial), m.Top(), a.Top())
			}
		}
	}
	if refused == 0 || walked == 0 {
		t.Errorf("the model refused %d cut profiles, %d of them found by a walk: the test asks too little", refused, walked)
	}
}

// wireField is one protobuf field of a test's profile bytes: its number
// and wire type, where it starts (at) and ends (end), and, for a
// length-delimited field, its payload data[s:e].
type wireField struct {
	num     protowire.Number
	typ     protowire.Type
	at, end int
	s, e    int
}

// wireFields lists the fields of data[from:to] (protowire reads them:
// the tests craft inputs, they do not decode profiles).
func wireFields(t *testing.T, data []byte, from, to int) []wireField {
	t.Helper()
	var fs []wireField
	for pos := from; pos < to; {
		num, typ, n := protowire.ConsumeTag(data[pos:to])
		if n < 0 {
			t.Fatalf("byte %d: %v", pos, protowire.ParseError(n))
		}
		f := wireField{num: num, typ: typ, at: pos}
		m := protowire.ConsumeFieldValue(num, typ, data[pos+n:to])
		if m < 0 {
			t.Fatalf("byte %d: %v", pos+n, protowire.ParseError(m))
		}
		if typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(data[pos+n : to])
			f.e = pos + n + k
			f.s = f.e - len(v)
		}
		pos += n + m
		f.end = pos
		fs = append(fs, f)
	}
	return fs
}

// writeTemp writes data to a new file and returns its path.
func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "p.pb")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A profile whose records the model path must read (a negative value, a
// sum past int64, a diff profile's label) is sent to it whichever way it
// is prepared: with the ids left to the walk, scan checks the values
// itself, and a label makes check read the records as before. The model
// path's answer (its error, or a model input) is the one given.
func TestStreamValuesChecked(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		edit func(p *pprofile.Profile)
	}{
		{"negative value", func(p *pprofile.Profile) { p.Sample[7].Value[0] = -3 }},
		{"sum past int64", func(p *pprofile.Profile) {
			p.Sample[3].Value[1] = math.MaxInt64 - 10
			p.Sample[9].Value[1] = 11
		}},
		{"diff label", func(p *pprofile.Profile) {
			p.Sample[5].Label = map[string][]string{profile.BaseLabel: {"true"}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := synth.DefaultConfig()
			cfg.Stacks, cfg.Functions = 50, 40
			p := synth.Generate(cfg)
			c.edit(p)
			r := rawFile(t, dir, strings.ReplaceAll(c.name, " ", "-")+".pb.gz", p, profile.Options{})
			_, lerr := pull.Load(r)
			for _, opts := range []PrepareOptions{{}, {IDsInWalk: true}} {
				in, err := PrepareWith(r, opts)
				if fmt.Sprint(err) != fmt.Sprint(lerr) {
					t.Errorf("%+v: Prepare error %v, the model's %v", opts, err, lerr)
				}
				if err == nil && in.Streamed() {
					t.Errorf("%+v: streamed, want the model path's input", opts)
				}
			}
		})
	}
}

// The first streamed profile's shard is adopted whole by an Analyzer that
// has met no method (adopt), and the Analyzer goes on as if it had walked
// it: a profile walked serially afterwards (from the model, the other
// side) gives what an Analyzer that walked both serially gives, with
// inclusive values, which count each method once a sample by a stamp.
func TestAdoptedShardThenSerialWalk(t *testing.T) {
	dir := t.TempDir()
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions = 3000, 300
	r := rawFile(t, dir, "p.pb.gz", synth.Generate(cfg), profile.Options{})
	l, err := pull.Load(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{Cum: true, Top: -1}, {By: result.ByCaller, Top: -1}} {
		mixed, serial := NewAnalyzer(opts), NewAnalyzer(opts)
		in, err := PrepareWith(r, PrepareOptions{IDsInWalk: true})
		if err != nil || !in.Streamed() {
			t.Fatalf("Prepare: %v", err)
		}
		if err := mixed.AddInput(result.Base, in); err != nil {
			t.Fatal(err)
		}
		if err := mixed.Wait(); err != nil {
			t.Fatal(err)
		}
		mixed.flush() // the shard is merged: adopted
		for _, a := range []*Analyzer{mixed, serial} {
			if a == serial {
				if err := a.Add(result.Base, l); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Add(result.New, l); err != nil {
				t.Fatal(err)
			}
		}
		sameJSON(t, fmt.Sprintf("%+v diff", opts), serial.Diff(), mixed.Diff())
	}
}

// A function the profile leaves unnamed (a line with an empty name) makes
// its locations take the Location's own path, as the model's walk names
// them (by address, or by their other lines), and mappings are found for
// locations that name several: the streamed results are the model's.
func TestStreamUnnamedFunctionsAndMappings(t *testing.T) {
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions = 400, 60
	p := synth.Generate(cfg)
	lib := &pprofile.Mapping{ID: uint64(len(p.Mapping) + 1), Start: 1 << 40, Limit: 1<<40 + 1<<20, File: "/usr/lib/libunnamed.so", HasFunctions: true}
	p.Mapping = append(p.Mapping, lib)
	for i, fn := range p.Function {
		if i%7 == 3 {
			fn.Name = ""
		}
	}
	for i, loc := range p.Location {
		if i%5 == 1 {
			loc.Mapping = lib
		}
	}
	r := rawFile(t, t.TempDir(), "unnamed.pb.gz", p, profile.Options{})
	model, stream := bothPaths(t, Options{Top: -1}, [2][]*profile.Raw{{r}, {r}})
	sameJSON(t, "diff", model.Diff(), stream.Diff())
	sameJSON(t, "top", model.Top(), stream.Top())
}

// splitIDFields rewrites every third sample record of the uncompressed
// profile data so that its location ids come in two fields: two packed
// ones (how) == "packed", or a packed one then each of the rest unpacked
// ("unpacked"), or the ids unpacked first and then packed ("unpacked
// first"). The protobuf format allows each; the ids' order is kept.
func splitIDFields(t *testing.T, data []byte, how string) []byte {
	t.Helper()
	field := func(dst []byte, num int, payload []byte) []byte {
		dst = binary.AppendUvarint(dst, uint64(num)<<3|2)
		dst = binary.AppendUvarint(dst, uint64(len(payload)))
		return append(dst, payload...)
	}
	packed := func(ids []uint64) []byte {
		var b []byte
		for _, id := range ids {
			b = binary.AppendUvarint(b, id)
		}
		return b
	}
	unpacked := func(dst []byte, ids []uint64) []byte {
		for _, id := range ids {
			dst = binary.AppendUvarint(dst, 1<<3)
			dst = binary.AppendUvarint(dst, id)
		}
		return dst
	}
	var out []byte
	n := 0
	for _, f := range wireFields(t, data, 0, len(data)) {
		if f.num == 2 {
			n++
		}
		if f.num != 2 || n%3 != 0 {
			out = append(out, data[f.at:f.end]...)
			continue
		}
		var rec []byte
		for _, g := range wireFields(t, data, f.s, f.e) {
			if g.num != 1 || g.typ != protowire.BytesType {
				rec = append(rec, data[g.at:g.end]...)
				continue
			}
			var ids []uint64
			for p := g.s; p < g.e; {
				u, k := protowire.ConsumeVarint(data[p:g.e])
				if k < 0 {
					t.Fatal("bad id")
				}
				ids, p = append(ids, u), p+k
			}
			half := max(len(ids)-3, 1) // the first part long enough to be left to the walk
			switch how {
			case "packed":
				rec = field(field(rec, 1, packed(ids[:half])), 1, packed(ids[half:]))
			case "unpacked":
				rec = unpacked(field(rec, 1, packed(ids[:half])), ids[half:])
			default:
				rec = field(unpacked(rec, ids[:3]), 1, packed(ids[3:]))
			}
		}
		out = field(out, 2, rec)
	}
	return out
}

// A sample whose location ids come in several fields gets, from the
// streaming decoder, the stack the model reads: the walk reads a long
// packed field itself (fuseIDs) only when it is the sample's one field
// of ids.
func TestStreamIDsInSeveralFields(t *testing.T) {
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions = 600, 200
	var buf bytes.Buffer
	if err := synth.Generate(cfg).WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	cfg.Side = synth.New
	var nbuf bytes.Buffer
	if err := synth.Generate(cfg).WriteUncompressed(&nbuf); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"packed", "unpacked", "unpacked first"} {
		t.Run(how, func(t *testing.T) {
			var sides [2][]*profile.Raw
			for s, data := range [][]byte{buf.Bytes(), nbuf.Bytes()} {
				path := writeTemp(t, splitIDFields(t, data, how))
				r, l, err := profile.LoadRaw(context.Background(), path, profile.Options{})
				if err != nil || r == nil {
					t.Fatalf("LoadRaw: %v, loaded %v", err, l != nil)
				}
				sides[s] = []*profile.Raw{r}
			}
			for _, sharded := range []bool{false, true} {
				// Cum: the root frames, in the second field, count too.
				for _, opts := range []Options{{}, {Cum: true, Top: -1}} {
					if sharded {
						opts = cutFine(opts)
					}
					model, stream := bothPaths(t, opts, sides)
					sameJSON(t, "diff", model.Diff(), stream.Diff())
					sameJSON(t, "top", model.Top(), stream.Top())
				}
			}
		})
	}
}
