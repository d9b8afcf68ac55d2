package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// otlpData is where the OTLP files and the Go profiles they were made from
// are (profile/otlp/testdata/README.md says how).
const otlpData = "../../profile/otlp/testdata/"

// TestOTLPSameAsPprof checks that OpenTelemetry profiles give the same
// report as the pprof they were made from: the diff of two CPU profiles
// (the base as OTLP protobuf, the new side as OTLP JSON, against the two
// Go profiles) and the top of a heap profile, with the file names the only
// difference, for the OTLP of both makers (gen's and the Collector contrib
// translator's). A gzipped OTLP file reads as the plain one.
func TestOTLPSameAsPprof(t *testing.T) {
	// Gzipped, as a Collector's file exporter may write it.
	gz := filepath.Join(t.TempDir(), "cpu-new.otlp.pb.gz")
	data, err := os.ReadFile(otlpData + "cpu-new.otlp.pb")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil || zw.Close() != nil {
		t.Fatal("gzip", err)
	}
	if err := os.WriteFile(gz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		pprof, otlp []string
	}{
		{"diff", []string{"diff", "--format", "markdown", otlpData + "cpu-base.pb.gz", otlpData + "cpu-new.pb.gz"},
			[]string{"diff", "--format", "markdown", otlpData + "cpu-base.otlp.pb", otlpData + "cpu-new.otlp.json"}},
		{"top", []string{"top", otlpData + "heap.pb.gz"}, []string{"top", otlpData + "heap.otlp.pb"}},
		// The contrib translator's files: the reports do not use what it
		// could not carry (labels, the order of inlined frames).
		{"diff, translator", []string{"diff", "--format", "markdown", otlpData + "cpu-base.pb.gz", otlpData + "cpu-new.pb.gz"},
			[]string{"diff", "--format", "markdown", otlpData + "cpu-base.translator.otlp.pb", otlpData + "cpu-new.translator.otlp.json"}},
		{"top, translator", []string{"top", otlpData + "heap.pb.gz"}, []string{"top", otlpData + "heap.translator.otlp.json"}},
		{"top gzipped", []string{"top", otlpData + "cpu-new.pb.gz"}, []string{"top", gz}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, stderr, code := profdiff(t, "", tc.pprof...)
			if code != 0 {
				t.Fatalf("pprof: exit %d: %s", code, stderr)
			}
			got, stderr, code := profdiff(t, "", tc.otlp...)
			if code != 0 {
				t.Fatalf("OTLP: exit %d: %s", code, stderr)
			}
			// Sources are named as given, or (Markdown) by their file names.
			for i, arg := range tc.otlp {
				got = strings.ReplaceAll(got, arg, tc.pprof[i])
				got = strings.ReplaceAll(got, filepath.Base(arg), filepath.Base(tc.pprof[i]))
			}
			if got != want {
				t.Errorf("OTLP report differs from the pprof one:\n--- OTLP\n%s\n--- pprof\n%s", got, want)
			}
			if !strings.Contains(want, "main.spin") && !strings.Contains(want, "main.allocate") {
				t.Errorf("the report names none of the generator's functions:\n%s", want)
			}
		})
	}
}

// TestOTLPBadInput checks that broken OTLP files exit 2 with one line
// naming the file and what is wrong.
func TestOTLPBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file, from string
		cut        int
		want       string
	}{
		{"cut.otlp.pb", "cpu-base.otlp.pb", 100, "malformed OTLP profiles: invalid protobuf"},
		{"cut.otlp.json", "cpu-base.otlp.json", 3000, "malformed OTLP profiles: invalid JSON"},
	} {
		data, err := os.ReadFile(otlpData + tc.from)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, tc.file)
		if err := os.WriteFile(path, data[:tc.cut], 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := profdiff(t, "", "top", path)
		if code != 2 || !strings.HasPrefix(stderr, "profdiff: "+path+": "+tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line naming the file: %s", tc.file, code, stderr, tc.want)
		}
	}
}
