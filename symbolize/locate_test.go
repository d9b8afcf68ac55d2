package symbolize

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// progIDs returns the built test program and its GNU and Go build IDs,
// checked against `go tool buildid` and, where present, `readelf -n`.
func progIDs(t *testing.T) (bin, gnu, goID string) {
	t.Helper()
	bin = buildGoProg(t)
	gnu, goID, err := fileBuildIDs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(goTool(t, "", "buildid", bin)); goID != want {
		t.Errorf("Go build ID %q, go tool buildid says %q", goID, want)
	}
	if _, err := exec.LookPath("readelf"); err == nil {
		out, err := exec.Command("readelf", "-n", bin).Output()
		if err != nil {
			t.Fatalf("readelf -n: %v", err)
		}
		m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
		if m == nil || string(m[1]) != gnu {
			t.Errorf("GNU build ID %q, readelf -n says %q", gnu, m)
		}
	}
	if gnu == "" {
		t.Fatal("the Go linker (≥1.24) writes a GNU build ID; none read")
	}
	return bin, gnu, goID
}

func TestLocateLayouts(t *testing.T) {
	bin, gnu, goID := progIDs(t)
	m := &pprofile.Mapping{File: "/build/out/goprog", BuildID: gnu}
	for _, tc := range []struct {
		name string
		rel  string // where the test puts the binary, under the search dir
		how  string // "symbols", "ppath" or "cache": which search finds it
		by   string
		m    *pprofile.Mapping
	}{
		{"pprof buildid/base", gnu + "/goprog", "ppath", ByBuildID, m},
		{"pprof buildid/any", gnu + "/whatever", "ppath", ByBuildID, m},
		{"llvm style", gnu[:2] + "/" + gnu[2:] + ".debug", "ppath", ByBuildID, m},
		{".build-id", ".build-id/" + gnu[:2] + "/" + gnu[2:] + ".debug", "symbols", ByBuildID, m},
		{"perf cache", "build/out/goprog/" + gnu + "/elf", "symbols", ByBuildID, m},
		{"full path", "build/out/goprog", "ppath", ByBuildID, m},
		{"usr/lib/debug", "usr/lib/debug/build/out/goprog.debug", "ppath", ByBuildID, m},
		{"debuginfod debuginfo", gnu + "/debuginfo", "cache", ByBuildID, m},
		{"debuginfod executable", gnu + "/executable", "cache", ByBuildID, m},
		{"Go build ID", "goprog", "symbols", ByBuildID, &pprofile.Mapping{File: "/x/goprog", BuildID: goID}},
		{"by name, no build ID", "goprog", "ppath", ByName, &pprofile.Mapping{File: "/elsewhere/goprog"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			want := filepath.Join(dir, tc.rel)
			place(t, bin, want)
			var opts Options
			switch tc.how {
			case "symbols":
				opts = Options{Paths: []string{dir}}
			case "ppath":
				opts = Options{Env: envOf("PPROF_BINARY_PATH", "/nonexistent:"+dir)}
			case "cache":
				opts = Options{Env: envOf("DEBUGINFOD_CACHE_PATH", dir)}
			}
			got, err := Locate(tc.m, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Path != want || got.By != tc.by {
				t.Errorf("Locate = %+v, want %s by %s", got, want, tc.by)
			}
		})
	}
}

// A file named like the mapping but of another build is rejected, and a
// build-ID match later in the search wins over a name match earlier.
func TestLocateBuildIDFirst(t *testing.T) {
	bin, gnu, _ := progIDs(t)
	first, second := t.TempDir(), t.TempDir()
	other := filepath.Join(first, "goprog")
	place(t, bin, other)
	m := &pprofile.Mapping{File: "/build/goprog", BuildID: strings.Repeat("ab", 20)}
	_, err := Locate(m, Options{Paths: []string{first}})
	if err == nil || !strings.Contains(err.Error(), "build ID mismatch: "+other+" has build ID "+gnu[:12]) {
		t.Errorf("Locate of another build: %v, want a build ID mismatch naming %s", err, other)
	}
	m.BuildID = gnu
	place(t, bin, filepath.Join(second, gnu, "debuginfo"))
	if err := os.WriteFile(other, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Locate(m, Options{Paths: []string{first}, Env: envOf("DEBUGINFOD_CACHE_PATH", second)})
	if err != nil || got.Path != filepath.Join(second, gnu, "debuginfo") || got.By != ByBuildID {
		t.Errorf("Locate = %+v, %v; want the debuginfod cache's file by build ID", got, err)
	}
}

// Without a match the error (ErrNotFound) says where Locate looked,
// naming the caller's paths as Options.PathsName says; the environment is
// read only through Options.Env.
func TestLocateNotFound(t *testing.T) {
	m := &pprofile.Mapping{File: "/opt/libfoo.so", BuildID: "1a2b3c4d5e6f7a8b9c0d"}
	t.Setenv("PPROF_BINARY_PATH", t.TempDir())
	_, err := Locate(m, Options{Paths: []string{t.TempDir()}})
	want := "no file found in the symbol paths (1 path), PPROF_BINARY_PATH (unset) or the debuginfod cache (none)"
	if err == nil || err.Error() != want || !errors.Is(err, ErrNotFound) {
		t.Errorf("Locate: %v\nwant %s", err, want)
	}
	_, err = Locate(m, Options{PathsName: "--symbols", Env: envOf("PPROF_BINARY_PATH", "/a:/b", "HOME", "/home/u")})
	want = "no file found in --symbols (none given), PPROF_BINARY_PATH (/a:/b) or the debuginfod cache (/home/u/.cache/debuginfod_client)"
	if err == nil || err.Error() != want {
		t.Errorf("Locate: %v\nwant %s", err, want)
	}
}

func TestDebuginfodCache(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, ""},
		{[]string{"DEBUGINFOD_CACHE_PATH", "/c", "HOME", home}, "/c"},
		{[]string{"XDG_CACHE_HOME", "/x", "HOME", home}, "/x/debuginfod_client"},
		{[]string{"HOME", home}, home + "/.cache/debuginfod_client"},
	} {
		var env func(string) string
		if tc.env != nil {
			env = envOf(tc.env...)
		}
		if got := DebuginfodCache(env); got != tc.want {
			t.Errorf("DebuginfodCache(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
	if err := os.Mkdir(filepath.Join(home, ".debuginfod_client_cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := DebuginfodCache(envOf("XDG_CACHE_HOME", "/x", "HOME", home)); got != home+"/.debuginfod_client_cache" {
		t.Errorf("with ~/.debuginfod_client_cache present: %q", got)
	}
}
