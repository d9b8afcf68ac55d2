package profile

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/gotrace"
)

// readersGolden holds one digest per corpus file of what Parse made of it
// (see readerDigest): the readers' output pinned, so that making a reader
// faster cannot change what it reads. Regenerate it, after a change that
// is meant to change output, with
//
//	PROFDIFF_UPDATE_GOLDEN=1 go test ./profile -run TestReadersGolden
const readersGolden = "testdata/readers.golden"

// TestReadersGolden parses every file of the shared corpus and compares a
// digest of the result (format, containers, kind, warnings and the whole
// profile, or the error) with the one recorded in testdata.
func TestReadersGolden(t *testing.T) {
	dir := corpusDir(t)
	entries := readCorpusIndex(t, dir)
	got := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.file)))
		if err != nil {
			t.Fatal(err)
		}
		got[e.file] = readerDigest(e.file, data)
	}
	if os.Getenv("PROFDIFF_UPDATE_GOLDEN") != "" {
		writeGolden(t, got)
		return
	}
	want := readGolden(t)
	for _, e := range entries {
		w, ok := want[e.file]
		switch {
		case !ok:
			t.Errorf("%s: not in %s (regenerate it: see readersGolden)", e.file, readersGolden)
		case w != got[e.file]:
			t.Errorf("%s: parsed to digest %s, want %s: a reader's output changed", e.file, got[e.file], w)
		}
	}
}

// readerDigest is the SHA-256 of everything Parse returns for data: the
// format, containers, kind and warnings of the Loaded, and its profile
// as pprof's String prints it (sample types, samples with values, labels
// and location IDs, locations with their lines, mappings) followed by
// every function's names, file and start line; or the error's text.
func readerDigest(name string, data []byte) string {
	var sb strings.Builder
	l, err := Parse(name, data, 0)
	if err != nil {
		fmt.Fprintf(&sb, "error: %v\n", err)
	} else {
		fmt.Fprintf(&sb, "format %s containers %q kind %s\n", l.Format, l.Containers, l.Kind)
		for _, w := range l.Warnings {
			fmt.Fprintf(&sb, "warning: %s\n", w)
		}
		if l.Format == FormatGoTrace && tracev1(data) {
			// x/exp/trace converts Go 1.11-1.21 traces emitting the
			// goroutines that predate the trace in map order, which
			// moves a few nanoseconds between samples from run to run
			// (one file, parsed twice, differs by 2 ns in a sample):
			// for these the digest pins everything but the values.
			sb.WriteString("values not pinned (trace v1)\n")
			for _, s := range l.Profile.Sample {
				clear(s.Value)
			}
		}
		writeProfileText(&sb, l.Profile)
	}
	sum := sha256.Sum256([]byte(sb.String()))
	return hex.EncodeToString(sum[:])
}

// tracev1 reports whether data is a Go execution trace older than Go
// 1.22's format.
func tracev1(data []byte) bool {
	v := strings.TrimPrefix(gotrace.Version(data), "1.")
	n, err := strconv.Atoi(v)
	return err == nil && n < 22
}

// writeProfileText writes p in full, for a digest.
func writeProfileText(sb *strings.Builder, p *pprofile.Profile) {
	sb.WriteString(p.String())
	for _, f := range p.Function {
		fmt.Fprintf(sb, "function %d %q %q %q %d\n", f.ID, f.Name, f.SystemName, f.Filename, f.StartLine)
	}
	fmt.Fprintf(sb, "drop %q keep %q comments %q default %q\n", p.DropFrames, p.KeepFrames, p.Comments, p.DefaultSampleType)
}

func readGolden(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(readersGolden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, digest, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		m[name] = digest
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func writeGolden(t *testing.T, m map[string]string) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("# corpus file\tSHA-256 of what profile.Parse made of it (see golden_test.go)\n")
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&sb, "%s\t%s\n", n, m[n])
	}
	if err := os.WriteFile(readersGolden, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
