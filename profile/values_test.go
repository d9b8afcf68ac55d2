package profile

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// Profiles written by the real writer (github.com/google/pprof/profile)
// with values that would make shares negative or above 100%, or wrap.
func TestLoadRefusesNegativeAndOverflowingValues(t *testing.T) {
	max := int64(math.MaxInt64)
	for _, c := range []struct {
		name   string
		values [][]int64 // per sample: samples/count, cpu/nanoseconds
		want   string
	}{
		{"negative.pb.gz", [][]int64{{1, -50}, {1, 30}}, "sample 1 of 2 has a negative cpu/nanoseconds value (-50); only a diff profile has negative values"},
		{"negative-count.pb.gz", [][]int64{{3, 30}, {-2, 20}}, "sample 2 of 2 has a negative samples/count value (-2)"},
		{"overflow.pb.gz", [][]int64{{max, 1}, {1, 1}}, "sample 2 of 2: the samples/count values sum past the int64 maximum (9223372036854775807)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stacks []testStack
			for i, v := range c.values {
				stacks = append(stacks, testStack{frames: []string{"main.f" + string(rune('0'+i)), "main.main"}, values: v})
			}
			p := buildTestProfile([]string{"samples/count", "cpu/nanoseconds"}, "cpu/nanoseconds", 10_000_000, stacks)
			path := writeTemp(t, c.name, encodeT(t, p, true))
			_, err := loadT(t, path, Options{})
			checkError(t, err, path, c.want)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%v: want ErrCorrupt", err)
			}
		})
	}
}

// A delta heap profile (Go's /debug/pprof/heap?seconds=N) holds negative
// inuse values: they are left out, loudly, and the alloc values read.
func TestLoadDeltaHeapDropsInuse(t *testing.T) {
	p := buildTestProfile([]string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"}, "space/bytes", 524288, []testStack{
		{frames: []string{"main.alloc", "main.main"}, values: []int64{3, 3000, -2, -2000}},
		{frames: []string{"main.keep", "main.main"}, values: []int64{1, 1000, 1, 1000}},
	})
	p.DefaultSampleType = "inuse_space"
	path := writeTemp(t, "heap-delta.pb.gz", encodeT(t, p, true))
	l := mustLoad(t, path, Options{})
	var types []string
	for _, st := range l.Profile.SampleType {
		types = append(types, typeName(st))
	}
	if got := strings.Join(types, " "); got != "alloc_objects/count alloc_space/bytes" {
		t.Errorf("sample types %s, want the alloc ones", got)
	}
	if got := l.Profile.Sample[0].Value; len(got) != 2 || got[0] != 3 || got[1] != 3000 {
		t.Errorf("first sample %v", got)
	}
	if l.Profile.DefaultSampleType != "" || l.Kind != KindHeap {
		t.Errorf("default sample type %q, kind %s", l.Profile.DefaultSampleType, l.Kind)
	}
	if !hasWarning(l, "inuse_objects and inuse_space hold differences, some negative, and are left out") {
		t.Errorf("warnings %q", l.Warnings)
	}

	// With no alloc type to read, the negative value is an error.
	p.SampleType, p.DefaultSampleType = p.SampleType[2:], ""
	for _, s := range p.Sample {
		s.Value = s.Value[2:]
	}
	path = writeTemp(t, "inuse-delta.pb.gz", encodeT(t, p, true))
	_, err := loadT(t, path, Options{})
	checkError(t, err, path, "sample 1 of 2 has a negative inuse_objects/count value (-2)")
}

// A diff profile given as a profile says what to pass instead: one
// written by `go tool pprof -proto -diff_base`, and one by DiffProfile
// (profdiff's --output-pprof).
func TestLoadRefusesDiffProfiles(t *testing.T) {
	base, newer := testCPUProfile(), testCPUProfile()
	newer.Sample[0].Value = []int64{60, 600_000_000}
	dir := t.TempDir()
	basePath, newPath := filepath.Join(dir, "base.pb.gz"), filepath.Join(dir, "new.pb.gz")
	for path, p := range map[string]*pprofile.Profile{basePath: base, newPath: newer} {
		if err := os.WriteFile(path, encodeT(t, p, true), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const want = "this is a diff written by pprof or profdiff (its base samples are labelled pprof::base); pass the two original profiles"

	d, err := DiffProfile([]*pprofile.Profile{base}, []int{1}, []*pprofile.Profile{newer}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	ours := writeTemp(t, "profdiff-diff.pb.gz", encodeT(t, d, true))
	_, err = loadT(t, ours, Options{})
	checkError(t, err, ours, want)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("%v: want ErrUnsupported", err)
	}

	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to write a diff with go tool pprof")
	}
	theirs := filepath.Join(dir, "pprof-diff.pb.gz")
	out, err := exec.Command(gobin, "tool", "pprof", "-proto", "-output", theirs, "-diff_base", basePath, newPath).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -diff_base: %v\n%s", err, out)
	}
	_, err = loadT(t, theirs, Options{})
	checkError(t, err, theirs, want)
}

func TestFoldedCountOverflow(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"same-stack", "main;a 9223372036854775807\nmain;a 9223372036854775807\n", "line 2: the sample counts sum past the int64 maximum"},
		{"total", "main;a 9223372036854775000\n# comment\nmain;b 1000\n", "line 3: the sample counts sum past the int64 maximum"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeTemp(t, c.name+".folded", []byte(c.text))
			_, err := loadT(t, path, Options{})
			checkError(t, err, path, "folded stacks: "+c.want)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%v: want ErrCorrupt", err)
			}
		})
	}
	// Up to the maximum the counts load.
	path := writeTemp(t, "max.folded", []byte("main;a 9223372036854775806\nmain;a 1\n"))
	if l := mustLoad(t, path, Options{}); l.Profile.Sample[0].Value[0] != math.MaxInt64 {
		t.Errorf("value %d", l.Profile.Sample[0].Value[0])
	}
}
