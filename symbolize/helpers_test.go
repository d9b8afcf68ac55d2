package symbolize

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// goProg is testdata/goprog built once per test binary: its path, or why
// it could not be built.
var goProg struct {
	once sync.Once
	dir  string
	bin  string
	err  string
	skip bool // err is a reason to skip, not a failure
}

// buildGoProg builds testdata/goprog with the go command (skipping the
// test when there is none) and returns the binary's path.
func buildGoProg(t *testing.T) string {
	t.Helper()
	goProg.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goProg.err, goProg.skip = "no go command to build testdata/goprog", true
			return
		}
		dir, err := os.MkdirTemp("", "symbolize-goprog")
		if err != nil {
			goProg.err = err.Error()
			return
		}
		goProg.dir = dir
		bin := filepath.Join(dir, "goprog")
		cmd := exec.Command(goBin, "build", "-o", bin, "./testdata/goprog")
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

func TestMain(m *testing.M) {
	code := m.Run()
	if goProg.dir != "" {
		os.RemoveAll(goProg.dir)
	}
	os.Exit(code)
}

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
