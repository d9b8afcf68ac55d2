package symbolize

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// goProg is testdata/goprog built once per test binary: its path, or why
// it could not be built; and the CPU profile of one run of it.
var goProg struct {
	once sync.Once
	dir  string
	bin  string
	err  string
	skip bool // err is a reason to skip, not a failure

	profOnce sync.Once
	prof     *pprofile.Profile
	profErr  string
}

// buildGoProg builds testdata/goprog with the go command (skipping the
// test when there is none) and returns the binary's path. Its DWARF is
// left uncompressed (-ldflags=-compressdwarf=false), for
// TestSymbolizeBrokenDWARFWarns to break; TestObjectGo reads compressed
// DWARF. The binary is shared: tests must not change it.
func buildGoProg(t *testing.T) string {
	t.Helper()
	goProg.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goProg.err, goProg.skip = "no go command to build testdata/goprog", true
			return
		}
		dir, err := os.MkdirTemp(testDir, "goprog")
		if err != nil {
			goProg.err = err.Error()
			return
		}
		goProg.dir = dir
		bin := filepath.Join(dir, "goprog")
		cmd := exec.Command(goBin, "build", "-ldflags=-compressdwarf=false", "-o", bin, "./testdata/goprog")
		if out, err := cmd.CombinedOutput(); err != nil {
			goProg.err = "go build: " + err.Error() + ": " + string(out)
			return
		}
		goProg.bin = bin
	})
	if goProg.bin == "" {
		if goProg.skip {
			t.Skip(goProg.err)
		}
		t.Fatal(goProg.err)
	}
	return goProg.bin
}

// goProgProfile returns the CPU profile of a run of buildGoProg's binary,
// made once per test binary. It is shared: tests must not change it.
func goProgProfile(t *testing.T) *pprofile.Profile {
	t.Helper()
	bin := buildGoProg(t)
	goProg.profOnce.Do(func() {
		out := filepath.Join(goProg.dir, "cpu.pb.gz")
		if b, err := exec.Command(bin, out).CombinedOutput(); err != nil {
			goProg.profErr = fmt.Sprintf("%s: %v: %s", bin, err, b)
			return
		}
		f, err := os.Open(out)
		if err != nil {
			goProg.profErr = err.Error()
			return
		}
		defer f.Close()
		if goProg.prof, err = pprofile.Parse(f); err != nil {
			goProg.profErr = err.Error()
		}
	})
	if goProg.profErr != "" {
		t.Fatal(goProg.profErr)
	}
	return goProg.prof
}

// testDir holds what the tests share (built programs, a profile);
// TestMain removes it.
var testDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "symbolize-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// longTests says whether the exhaustive variants run (PROFDIFF_TEST_LONG
// non-empty): a CPU profile of every build in TestObjectGo.
func longTests() bool { return os.Getenv("PROFDIFF_TEST_LONG") != "" }

// envOf is an Options.Env reading only kv.
func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// place copies the file src to dst, making dst's directories.
func place(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
