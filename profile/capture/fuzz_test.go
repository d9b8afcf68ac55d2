package capture

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzManifest: ReadManifest on any manifest.json fails with one line
// naming the file, or returns a manifest whose every profile path, and
// every path ProfilePath gives for it, stays inside the folder; written
// back with WriteManifest it reads the same. Seeds: manifests written by
// WriteManifest, and ones naming paths outside the folder.
func FuzzManifest(f *testing.F) {
	seed := func(m *Manifest) {
		dir := f.TempDir()
		if err := WriteManifest(dir, m); err != nil {
			f.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, ManifestName))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	start := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	seed(&Manifest{Format: ManifestFormat, URL: "http://127.0.0.1:6060/debug/pprof/", Seconds: 5, Start: start, End: start.Add(6 * time.Second),
		GoVersion: "go1.26.0", GOMAXPROCS: 4, CPUs: 4, Files: []File{{Kind: "cpu", Path: "cpu.pb.gz", Bytes: 100, Samples: 3},
			{Kind: "wall", Path: "wall.pb.gz", Bytes: 80}, {Kind: "trace", Path: "trace.out.gz", Bytes: 4000}},
		Params: map[string]any{"variant": "global-lock", "cores": 4}, Load: json.RawMessage(`{"rps_ok": 1234.5}`),
		Notes: []string{"no fgprof endpoint"}, LatencyMS: &Latency{P50: 1, P99: 9}})
	seed(&Manifest{Format: ManifestFormat, Interrupted: true, Errors: []string{"cpu: context canceled"}, Files: []File{}})
	f.Add([]byte(`{"files": [{"kind": "cpu", "path": "../cpu.pb.gz"}]}`))
	f.Add([]byte(`{"files": [{"kind": "cpu", "path": "/etc/passwd"}]}`))
	dir, again := f.TempDir(), f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, ManifestName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadManifest(dir)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, filepath.Join(dir, ManifestName)+": ") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error %q is not one line naming the manifest", msg)
			}
			return
		}
		kinds := []string{""}
		for _, f := range m.Files {
			if !inside(dir, filepath.Join(dir, f.Path)) {
				t.Fatalf("file path %q leaves the folder", f.Path)
			}
			kinds = append(kinds, f.Kind)
		}
		for _, k := range kinds {
			p, err := ProfilePath(dir, k)
			if err != nil {
				if strings.ContainsAny(err.Error(), "\r\n") {
					t.Errorf("ProfilePath(%q): error %q spans lines", k, err)
				}
			} else if !inside(dir, p) {
				t.Fatalf("ProfilePath(%q) = %q, outside %s", k, p, dir)
			}
		}
		if err := WriteManifest(again, m); err != nil {
			t.Fatalf("a manifest that reads does not write: %v", err)
		}
		back, err := ReadManifest(again)
		if err != nil {
			t.Fatalf("a manifest written back does not read: %v", err)
		}
		if a, b := marshal(t, m), marshal(t, back); !bytes.Equal(a, b) {
			t.Errorf("manifest changes when written back:\n%s\n%s", a, b)
		}
	})
}

// inside reports whether path is dir or below it.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel)
}

func marshal(t *testing.T, m *Manifest) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
