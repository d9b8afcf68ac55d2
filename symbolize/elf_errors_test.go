package symbolize

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// TestOpenObjectErrors: a file that is not ELF, or an ELF file cut short,
// gives an error that names the file; a missing file the os error.
func TestOpenObjectErrors(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "elf", "hot.c")
	if _, err := OpenObject(src); err == nil || !strings.Contains(err.Error(), src) ||
		!strings.Contains(err.Error(), "not an ELF") {
		t.Errorf("C source: got %v, want an error naming it as not ELF", err)
	}
	if _, err := OpenObject(filepath.Join(dir, "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: got %v", err)
	}
	bin := buildC(t, dir, "hot", "hot.c", "-O2", "-g")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 4, 16, 63, 64, len(b) / 2, len(b) - 1} {
		cut := filepath.Join(dir, "cut")
		if err := os.WriteFile(cut, b[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		want := "truncated ELF file"
		if n < 4 {
			want = "not an ELF"
		}
		o, err := OpenObject(cut)
		if err == nil {
			o.Close()
			t.Errorf("cut to %d of %d bytes: no error", n, len(b))
		} else if !strings.Contains(err.Error(), cut) || !strings.Contains(err.Error(), want) {
			t.Errorf("cut to %d bytes: error %q does not name the file and say %q", n, err, want)
		}
	}
}

// FuzzOpenObject feeds OpenObject's reader ELF bytes derived from a real
// binary (gcc's hot.c with DWARF, when gcc is here) and looks up the
// addresses the file itself suggests: it must not panic.
func FuzzOpenObject(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	if bin, err := buildSeed(f); err == nil {
		f.Add(bin)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := newELFObject("fuzz", bytes.NewReader(b))
		if err != nil {
			return
		}
		o.BuildID()
		var addrs []uint64
		for _, s := range o.syms.syms {
			addrs = append(addrs, s.addr, s.end-1)
		}
		for _, p := range o.loads {
			addrs = append(addrs, p.Vaddr, p.Vaddr+p.Filesz/2)
		}
		for _, a := range addrs[:min(len(addrs), 64)] {
			o.Frames(nil, a)
			o.Frames(&pprofile.Mapping{}, a)
		}
	})
}

// buildSeed compiles hot.c with gcc -O2 -g into a temporary directory and
// returns the binary's bytes.
func buildSeed(f *testing.F) ([]byte, error) {
	dir := f.TempDir()
	gcc, err := lookTool("gcc")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "hot")
	if out, err := execCommand(gcc, "-O2", "-g", "-o", bin, filepath.Join("testdata", "elf", "hot.c")); err != nil {
		return nil, errors.New(string(out))
	}
	return os.ReadFile(bin)
}
