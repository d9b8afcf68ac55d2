package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A new run leaves the newest keepRuns folders of its kind under
// profdiff-out; other kinds, other names and files are left alone.
func TestPruneRuns(t *testing.T) {
	root := t.TempDir()
	var demos []string
	for i := range 7 {
		name := "20261206-1100" + string(rune('0'+i)) + "0-demo"
		demos = append(demos, name)
		if err := os.MkdirAll(filepath.Join(root, name, "baseline"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	others := []string{"20261206-110000-json-global-lock", "my-demo", "20261206-demo"}
	for _, n := range others {
		if err := os.Mkdir(filepath.Join(root, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "20261206-100000-demo"), nil, 0o644); err != nil { // a file, not a run
		t.Fatal(err)
	}
	removed, err := pruneRuns(root, "demo", 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, demos[0]), filepath.Join(root, demos[1])}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %q; want the two oldest %q", removed, want)
	}
	ents, _ := os.ReadDir(root)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	wantLeft := append(append([]string{"20261206-100000-demo"}, demos[2:]...), others...)
	slices.Sort(wantLeft)
	if !slices.Equal(left, wantLeft) {
		t.Errorf("left %q; want %q", left, wantLeft)
	}
	if n, err := folderSize(root); err != nil || n != 0 {
		t.Errorf("size of empty folders: %d, %v", n, err)
	}
}

func TestProgressText(t *testing.T) {
	for _, c := range []struct {
		left int64 // ms
		want string
	}{
		{4000, "4 s of load left"},
		{3001, "4 s of load left"},
		{999, "1 s of load left"},
		{0, "load done, writing the captures..."},
		{-5, "load done, writing the captures..."},
	} {
		if got := progressText(msDuration(c.left)); got != c.want {
			t.Errorf("%d ms: %q, want %q", c.left, got, c.want)
		}
	}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
