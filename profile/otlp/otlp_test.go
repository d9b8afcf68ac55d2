package otlp

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pcommon"
	otlp "go.opentelemetry.io/collector/pdata/pprofile"
)

// The files of testdata are Go profiles (runtime/pprof) and the OTLP made
// of each, by gen with pdata's helpers and by the Collector contrib
// translator; testdata/README.md says how.

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func parsePprof(t *testing.T, name string) *pprofile.Profile {
	t.Helper()
	p, err := pprofile.ParseData(readFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// summary is what a profile says, independent of IDs and sample order:
// sample types, period, time, and the values of each stack (function
// names, lines, mappings with their build IDs and symbol flags, and
// labels).
func summary(p *pprofile.Profile) string {
	var b strings.Builder
	b.WriteString("types")
	for _, st := range p.SampleType {
		fmt.Fprintf(&b, " %s/%s", st.Type, st.Unit)
	}
	fmt.Fprintf(&b, "; default %q period %d %v time %d duration %d\n", p.DefaultSampleType, p.Period, *p.PeriodType, p.TimeNanos, p.DurationNanos)
	sums := map[string][]int64{}
	for _, s := range p.Sample {
		var k strings.Builder
		for _, l := range s.Location {
			fmt.Fprintf(&k, "%#x", l.Address)
			if l.Mapping != nil {
				m := l.Mapping
				fmt.Fprintf(&k, "@%s[%#x,%#x)%s %v", m.File, m.Start, m.Limit, m.BuildID, []bool{m.HasFunctions, m.HasFilenames, m.HasLineNumbers, m.HasInlineFrames})
			}
			for _, ln := range l.Line {
				fmt.Fprintf(&k, " %s %s:%d", ln.Function.Name, ln.Function.Filename, ln.Line)
			}
			k.WriteString(";")
		}
		for _, key := range slices.Sorted(maps.Keys(s.Label)) {
			fmt.Fprintf(&k, " %s=%v", key, s.Label[key])
		}
		for _, key := range slices.Sorted(maps.Keys(s.NumLabel)) {
			fmt.Fprintf(&k, " %s=%v%v", key, s.NumLabel[key], s.NumUnit[key])
		}
		v := sums[k.String()]
		if v == nil {
			v = make([]int64, len(s.Value))
		}
		for i, x := range s.Value {
			v[i] += x
		}
		sums[k.String()] = v
	}
	for _, k := range slices.Sorted(maps.Keys(sums)) {
		if !slices.ContainsFunc(sums[k], func(v int64) bool { return v != 0 }) {
			continue // no value: nothing to convert (a Go heap profile has such samples)
		}
		fmt.Fprintf(&b, "%v %s\n", sums[k], k)
	}
	return b.String()
}

// firstDiff says where two summaries first differ, or "" when they do not.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  OTLP: %.600s\n  pprof: %.600s", i+1, a, b)
		}
	}
	return ""
}

// parseOTLP reads OTLP that must be read without a warning into a valid
// profile.
func parseOTLP(t *testing.T, data []byte) *pprofile.Profile {
	t.Helper()
	if !Looks(data) {
		t.Fatal("Looks says no")
	}
	p, warns, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings: %q", warns)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}

// The OTLP files of testdata, by who made them: the suffix of their names
// after the Go profile's, the comments they read with, and what of the Go
// profile the maker carries into OTLP.
var makers = []struct {
	name, suffix string
	comments     []string
	carries      func(*pprofile.Profile)
}{
	{"gen (pdata's helpers)", ".otlp", []string{"resource: service.name=otlp-gen"}, genCarries},
	{"the Collector contrib translator", ".translator.otlp", nil, translatorCarries},
}

// genCarries changes a Go profile into what gen makes of it: all but the
// mappings' build IDs and symbol flags (HasFunctions, ...), which it does
// not write.
func genCarries(p *pprofile.Profile) {
	for _, m := range p.Mapping {
		m.BuildID = ""
		m.HasFunctions, m.HasFilenames, m.HasLineNumbers, m.HasInlineFrames = false, false, false, false
	}
}

// translatorCarries changes a Go profile into what the Collector contrib
// translator makes of it (testdata/README.md): no sample labels, which it
// cannot convert, and the lines of each location (a frame and the frames
// inlined into it) sorted by line, column and function, as it sorts them.
func translatorCarries(p *pprofile.Profile) {
	for _, s := range p.Sample {
		s.Label, s.NumLabel, s.NumUnit = nil, nil, nil
	}
	for _, l := range p.Location {
		slices.SortStableFunc(l.Line, func(a, b pprofile.Line) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Function.ID, b.Function.ID))
		})
	}
}

// TestSameAsPprof reads each OTLP file, protobuf and JSON, and checks it
// holds what the Go profile it was made from holds, less what its maker
// cannot carry: the same sample types, period, time, and the same values
// on the same stacks (frames, lines, mappings, labels). The default
// sample type is the one thing OTLP has no field for.
func TestSameAsPprof(t *testing.T) {
	for _, m := range makers {
		for _, name := range []string{"cpu-base", "cpu-new", "heap"} {
			want := parsePprof(t, name+".pb.gz")
			want.DefaultSampleType = ""
			m.carries(want)
			for _, enc := range []string{".pb", ".json"} {
				file := name + m.suffix + enc
				t.Run(file, func(t *testing.T) {
					p := parseOTLP(t, readFile(t, file))
					if d := firstDiff(summary(p), summary(want)); d != "" {
						t.Errorf("OTLP written by %s and the pprof it was made from differ: %s", m.name, d)
					}
					if fmt.Sprint(p.Comments) != fmt.Sprint(m.comments) {
						t.Errorf("comments %q, want %q", p.Comments, m.comments)
					}
				})
			}
		}
	}
}

// TestTranslatorLosses checks that what translatorCarries takes away is
// lost in the translator's files, so that the README's account of them
// stays true: the Go profiles have labels and a location whose inlined
// frames are not in line order, and the OTLP has neither.
func TestTranslatorLosses(t *testing.T) {
	for _, name := range []string{"cpu-base", "heap"} {
		want := parsePprof(t, name+".pb.gz")
		want.DefaultSampleType = ""
		p := parseOTLP(t, readFile(t, name+".translator.otlp.pb"))
		if summary(p) == summary(want) {
			t.Errorf("%s: the translator's OTLP holds all the Go profile does", name)
		}
		labelled := slices.ContainsFunc(want.Sample, func(s *pprofile.Sample) bool { return len(s.Label)+len(s.NumLabel) > 0 })
		unlabelled := !slices.ContainsFunc(p.Sample, func(s *pprofile.Sample) bool { return len(s.Label)+len(s.NumLabel) > 0 })
		if !labelled || !unlabelled {
			t.Errorf("%s: labels in the Go profile %v, none in the OTLP %v; want both", name, labelled, unlabelled)
		}
	}
	heap := parsePprof(t, "heap.pb.gz")
	sorted := parsePprof(t, "heap.pb.gz")
	translatorCarries(sorted)
	for _, s := range heap.Sample {
		s.Label, s.NumLabel, s.NumUnit = nil, nil, nil
	}
	if summary(heap) == summary(sorted) {
		t.Error("heap.pb.gz has no location whose inlined frames the translator reorders")
	}
}

// TestLooks checks what is and is not taken for OTLP: the Go profiles
// themselves (pprof, whose protobuf starts with the same field numbers),
// other JSON, and truncated OTLP.
func TestLooks(t *testing.T) {
	pprofData := parsePprof(t, "heap.pb.gz")
	var raw bytes.Buffer
	if err := pprofData.WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	bin := readFile(t, "cpu-base.otlp.pb")
	for _, tc := range []struct {
		name string
		data []byte
		want bool
	}{
		{"OTLP protobuf", bin, true},
		{"OTLP JSON", readFile(t, "cpu-base.otlp.json"), true},
		{"OTLP JSON with a BOM", append([]byte("\uFEFF"), readFile(t, "cpu-base.otlp.json")...), true},
		{"pprof protobuf", raw.Bytes(), false},
		{"OTLP cut short", bin[:100], true},
		{"a resource cut before its first field", bin[:3], false},
		{"pprof protobuf cut short", raw.Bytes()[:raw.Len()/2], false},
		{"a 4 GiB field before a pprof", append([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, raw.Bytes()...), false},
		{"speedscope JSON", []byte(`{"$schema": "https://www.speedscope.app/file-format-schema.json"}`), false},
		{"empty", nil, false},
	} {
		if got := Looks(tc.data); got != tc.want {
			t.Errorf("%s: Looks = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// edit reads the OTLP of cpu-base with pdata, changes it and returns
// what pdata's marshaller writes of it.
func edit(t *testing.T, change func(otlp.Profiles)) []byte {
	t.Helper()
	pd, err := (&otlp.ProtoUnmarshaler{}).UnmarshalProfiles(readFile(t, "cpu-base.otlp.pb"))
	if err != nil {
		t.Fatal(err)
	}
	change(pd)
	data, err := (&otlp.ProtoMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// firstProfile is the first profile of the first resource and scope.
func firstProfile(pd otlp.Profiles) otlp.Profile {
	return pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
}

// firstSample is the first sample of the first profile.
func firstSample(pd otlp.Profiles) otlp.Sample { return firstProfile(pd).Samples().At(0) }

// TestBadInput checks that broken files are refused with ErrShape and a
// message saying what is wrong where, never a panic.
func TestBadInput(t *testing.T) {
	bin := readFile(t, "cpu-base.otlp.pb")
	json := readFile(t, "cpu-base.otlp.json")
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated protobuf", bin[:len(bin)-7], fmt.Sprintf("invalid protobuf: top-level field 1 at byte 2274 runs past the end of the file, at byte %d (a file cut short?)", len(bin)-7)},
		{"truncated in the dictionary", bin[:1000], "invalid protobuf: top-level field 2 at byte 0 runs past the end of the file, at byte 1000 (a file cut short?)"},
		{"truncated JSON", json[:len(json)/2], fmt.Sprintf("invalid JSON at byte %d: unexpected end of JSON input", len(json)/2)},
		{"JSON syntax", append(append([]byte("\n "), json[:21]...), '}'), "invalid JSON at byte 24: invalid character '}' looking for beginning of value"},
		{"stack index out of range", edit(t, func(pd otlp.Profiles) { firstSample(pd).SetStackIndex(999) }),
			"resource 0, scope 0, profile 0 sample 0 stack_index 999 is out of stack_table"},
		{"location index out of range", edit(t, func(pd otlp.Profiles) {
			pd.Dictionary().StackTable().At(int(firstSample(pd).StackIndex())).LocationIndices().SetAt(0, -3)
		}), "location index -3 is out of location_table"},
		{"function index out of range", edit(t, func(pd otlp.Profiles) {
			pd.Dictionary().LocationTable().At(1).Lines().At(0).SetFunctionIndex(1 << 30)
		}), "function_index 1073741824 is out of function_table"},
		{"string index out of range", edit(t, func(pd otlp.Profiles) { firstProfile(pd).SampleType().SetTypeStrindex(12345) }),
			"sample_type type 12345 is out of string_table"},
		{"attribute index out of range", edit(t, func(pd otlp.Profiles) { firstSample(pd).AttributeIndices().FromRaw([]int32{77}) }),
			"attribute index 77 is out of attribute_table"},
		{"value overflow", edit(t, func(pd otlp.Profiles) { firstSample(pd).Values().FromRaw([]int64{math.MaxInt64, 1}) }),
			"sample 0: values overflow"},
		{"empty dictionary", edit(t, func(pd otlp.Profiles) { otlp.NewProfilesDictionary().CopyTo(pd.Dictionary()) }), "is out of string_table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse(tc.data)
			if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrShape saying %q", err, tc.want)
			}
		})
	}
}

// TestMerges checks how profiles, samples and attributes come together:
// a profile twice adds up, samples with only timestamps count one each,
// thread.name is the thread label, integer attributes are numeric labels
// with their unit, and different periods keep the first with a warning.
func TestMerges(t *testing.T) {
	base := parseOTLP(t, readFile(t, "cpu-base.otlp.pb"))
	total := func(p *pprofile.Profile, col int) (n int64) {
		for _, s := range p.Sample {
			n += s.Value[col]
		}
		return n
	}

	twice := edit(t, func(pd otlp.Profiles) {
		scopes := pd.ResourceProfiles().At(0).ScopeProfiles()
		again := scopes.AppendEmpty()
		scopes.At(0).CopyTo(again)
		p := again.Profiles().At(0)
		p.SetPeriod(2 * p.Period())
	})
	p, warns, err := Parse(twice)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != len(base.SampleType) || len(p.Sample) != len(base.Sample) {
		t.Errorf("the same profiles twice: %d sample types, %d samples; want %d and %d", len(p.SampleType), len(p.Sample), len(base.SampleType), len(base.Sample))
	}
	for col := range base.SampleType {
		if got, want := total(p, col), 2*total(base, col); got != want {
			t.Errorf("%s: total %d, want twice %d", base.SampleType[col].Type, got, want)
		}
	}
	if p.Period != base.Period || len(warns) != 1 || !strings.Contains(warns[0], "different periods") {
		t.Errorf("period %d, warnings %q; want %d and one warning of different periods", p.Period, warns, base.Period)
	}

	threads := edit(t, func(pd otlp.Profiles) {
		d := pd.Dictionary()
		str := func(s string) int32 {
			i, err := otlp.SetString(d.StringTable(), s)
			if err != nil {
				t.Fatal(err)
			}
			return i
		}
		attr := func(key string, set func(pcommon.Value), unit string) int32 {
			kv := d.AttributeTable().AppendEmpty()
			kv.SetKeyStrindex(str(key))
			kv.SetUnitStrindex(str(unit))
			set(kv.Value())
			return int32(d.AttributeTable().Len() - 1)
		}
		s := firstSample(pd)
		s.Values().FromRaw(nil)
		s.TimestampsUnixNano().FromRaw([]uint64{1, 2, 3})
		s.AttributeIndices().FromRaw([]int32{
			attr("thread.name", func(v pcommon.Value) { v.SetStr("worker-1") }, ""),
			attr("thread.id", func(v pcommon.Value) { v.SetInt(42) }, ""),
			attr("alloc", func(v pcommon.Value) { v.SetInt(64) }, "bytes"),
		})
	})
	p = parseOTLP(t, threads)
	var found bool
	for _, s := range p.Sample {
		if fmt.Sprint(s.Label["thread"]) == "[worker-1]" {
			found = true
			if s.Value[0] != 3 || fmt.Sprint(s.NumLabel["thread.id"], s.NumLabel["alloc"], s.NumUnit["alloc"]) != "[42] [64] [bytes]" {
				t.Errorf("value %v, numeric labels %v %v; want 3 (one per timestamp), thread.id 42, alloc 64 bytes", s.Value, s.NumLabel, s.NumUnit)
			}
		}
	}
	if !found {
		t.Error("no sample has thread worker-1")
	}
}

// TestProfileAttributes checks what is read of a profile's attributes,
// where the contrib translator writes what pprof holds for the whole
// profile: comments in their numbered order, each once however many
// profiles repeat them, and drop_frames, keep_frames and doc_url.
func TestProfileAttributes(t *testing.T) {
	data := edit(t, func(pd otlp.Profiles) {
		d := pd.Dictionary()
		attr := func(key, value string) int32 {
			k, err := otlp.SetString(d.StringTable(), key)
			if err != nil {
				t.Fatal(err)
			}
			kv := d.AttributeTable().AppendEmpty()
			kv.SetKeyStrindex(k)
			kv.Value().SetStr(value)
			return int32(d.AttributeTable().Len() - 1)
		}
		indices := []int32{
			attr("pprof.profile.comment.1", "second"),
			attr("pprof.profile.comment.0", "first"),
			attr("pprof.profile.comment.10", "eleventh"),
			attr("pprof.profile.drop_frames", "runtime\\..*"),
			attr("pprof.profile.doc_url", ""),
		}
		for _, p := range pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().All() {
			p.AttributeIndices().FromRaw(indices)
		}
	})
	p := parseOTLP(t, data)
	want := []string{"resource: service.name=otlp-gen", "first", "second", "eleventh"}
	if fmt.Sprint(p.Comments) != fmt.Sprint(want) || p.DropFrames != `runtime\..*` || p.KeepFrames != "" || p.DocURL != "" {
		t.Errorf("comments %q, drop %q, keep %q, doc %q; want %q, %q and none", p.Comments, p.DropFrames, p.KeepFrames, p.DocURL, want, `runtime\..*`)
	}
}

// TestEmpty checks that a message with a dictionary and no profiles is
// OTLP that reads as no samples (the loader then says it holds none).
func TestEmpty(t *testing.T) {
	data := edit(t, func(pd otlp.Profiles) {
		pd.ResourceProfiles().RemoveIf(func(otlp.ResourceProfiles) bool { return true })
	})
	if !Looks(data) {
		t.Fatal("a dictionary alone is not taken for OTLP")
	}
	p, _, err := Parse(data)
	if err != nil || len(p.Sample) != 0 {
		t.Errorf("got %v samples, error %v; want none and no error", p, err)
	}
}

func TestDeterministic(t *testing.T) {
	data := readFile(t, "heap.otlp.pb")
	var first []byte
	for range 3 {
		p := parseOTLP(t, data)
		var b bytes.Buffer
		if err := p.WriteUncompressed(&b); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b.Bytes()
		} else if !bytes.Equal(first, b.Bytes()) {
			t.Fatal("two reads of one file differ")
		}
	}
}

// TestManySampleTypesBounded checks the memory bound: a small file whose
// samples, each of one of 2,000 sample types, would make over a million
// pprof values (every pprof sample has one per type) is refused, while
// the same samples under one sample type read.
func TestManySampleTypesBounded(t *testing.T) {
	const types, stacks = 2000, 600
	build := func(distinct bool) []byte {
		return edit(t, func(pd otlp.Profiles) {
			d := pd.Dictionary()
			for range stacks {
				d.StackTable().AppendEmpty().LocationIndices().Append(1)
			}
			profiles := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles()
			profiles.RemoveIf(func(otlp.Profile) bool { return true })
			for i := range types {
				p := profiles.AppendEmpty()
				name := "t"
				if distinct {
					name = fmt.Sprint("t", i)
				}
				typ, err := otlp.SetString(d.StringTable(), name)
				if err != nil {
					t.Fatal(err)
				}
				p.SampleType().SetTypeStrindex(typ)
				if i == types-1 {
					// The last type's samples, each on its own stack.
					for s := range stacks {
						sample := p.Samples().AppendEmpty()
						sample.SetStackIndex(int32(d.StackTable().Len() - 1 - s))
						sample.Values().Append(1)
					}
				}
			}
		})
	}
	many := build(true)
	if _, _, err := Parse(many); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "more values than the file's size allows") {
		t.Errorf("%d bytes, %d sample types: error %v, want ErrShape for too many values", len(many), types, err)
	}
	p := parseOTLP(t, build(false))
	if len(p.SampleType) != 1 || len(p.Sample) != stacks {
		t.Errorf("one sample type: %d sample types and %d samples, want 1 and %d", len(p.SampleType), len(p.Sample), stacks)
	}
}

// TestSampleKeyDistinct checks that samples merge only when their stack
// and every label are the same: label sets that write the same characters
// in another split still make different keys.
func TestSampleKeyDistinct(t *testing.T) {
	type labels struct {
		lab  map[string][]string
		num  map[string][]int64
		unit map[string][]string
	}
	sets := []labels{
		{},
		{lab: map[string][]string{"a": {"bc"}}},
		{lab: map[string][]string{"a": {"b", "c"}}},
		{lab: map[string][]string{"ab": {"c"}}},
		{lab: map[string][]string{"a": {"b"}, "c": {}}},
		{num: map[string][]int64{"a": {1}}, unit: map[string][]string{"a": {""}}},
		{num: map[string][]int64{"a": {1}}, unit: map[string][]string{"a": {"bytes"}}},
		{num: map[string][]int64{"a": {12}}, unit: map[string][]string{"a": {""}}},
		{num: map[string][]int64{"a": {1, 2}}, unit: map[string][]string{"a": {"", ""}}},
	}
	seen := map[string]int{}
	for i, s := range sets {
		for _, stack := range []int32{1, 12} {
			k := sampleKey(stack, s.lab, s.num, s.unit)
			if j, dup := seen[k]; dup {
				t.Errorf("sets %d and %d (stack %d) share the key %q", j, i, stack, k)
			}
			seen[k] = i
			if again := sampleKey(stack, s.lab, s.num, s.unit); again != k {
				t.Errorf("set %d: key %q then %q", i, k, again)
			}
		}
	}
}
