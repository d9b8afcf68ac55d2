package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An output that is an input, a symbolic link, a folder or in a missing
// folder is refused with exit 2 before anything is written: the input and
// the link's target keep their bytes.
func TestOutputPathsRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.folded")
	data, err := os.ReadFile(net10)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.pb.gz")
	if err := os.Symlink(victim, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	inLink := filepath.Join(dir, "in-link.folded") // a second name of the input
	if err := os.Link(in, inLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"top self", []string{"top", "--output-pprof", in, in}, "is an input"},
		{"top hard link", []string{"top", "--output-pprof", inLink, in}, "is an input"},
		{"top glob", []string{"top", "--output-pprof", in, filepath.Join(dir, "*.folded")}, "is an input"},
		{"diff base", []string{"diff", "--output-pprof", in, in, net11}, "is an input"},
		{"diff symlink", []string{"diff", "--output-pprof", link, net10, net11}, "symbolic link"},
		{"top folder", []string{"top", "--output-pprof", dir, net10}, "is a folder"},
		{"missing folder", []string{"top", "--output-pprof", filepath.Join(dir, "no", "x.pb.gz"), net10}, "does not exist"},
		{"symbolize self", []string{"symbolize", "-o", in, in}, "is an input"},
		{"symbolize symlink", []string{"symbolize", "-o", link, in}, "symbolic link"},
		{"gate markdown", []string{"gate", "--markdown", in, "--base", in, "--new", net11}, "is an input"},
	} {
		out, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.name, code, stderr, c.want)
		}
		if out != "" {
			t.Errorf("%s: work done before the refusal: %q", c.name, out)
		}
		if got, _ := os.ReadFile(in); !bytes.Equal(got, data) {
			t.Fatalf("%s: the input was changed", c.name)
		}
		if got, _ := os.ReadFile(victim); string(got) != "keep me\n" {
			t.Fatalf("%s: the symlink's target was changed", c.name)
		}
	}
}

// createOutput will not follow a symbolic link put in place after the
// check.
func TestCreateOutputNoFollow(t *testing.T) {
	if noFollow == 0 {
		t.Skip("no O_NOFOLLOW on this platform")
	}
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if f, err := createOutput(link); err == nil {
		f.Close()
		t.Fatal("createOutput opened a symbolic link")
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep" {
		t.Fatal("the link's target was truncated")
	}
}
