package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// displayWidth is the columns s takes in a terminal, measured apart from
// the renderer (runewidth's grapheme clusters), ambiguous runes narrow.
func displayWidth(s string) int {
	return (&runewidth.Condition{StrictEmojiNeutral: true}).StringWidth(s)
}

// wideNameProfiles returns two goroutine profiles written by the Go
// runtime in a child process (TestWideFixtureChild), named in Japanese,
// whose goroutines wait in a Go method named in Japanese, of a type named
// in Japanese and fullwidth letters: one in the base, six in the new.
func wideNameProfiles(t *testing.T) (base, new string) {
	t.Helper()
	dir := childProfiles(t, "TestWideFixtureChild", "PROFDIFF_WIDE_FIXTURE")
	return filepath.Join(dir, "基準プロファイル.pb.gz"), filepath.Join(dir, "新しいプロファイル.pb.gz")
}

// TestWideFixtureChild writes wideNameProfiles' profiles; it runs only as
// that child.
func TestWideFixtureChild(t *testing.T) {
	dir := os.Getenv("PROFDIFF_WIDE_FIXTURE")
	if dir == "" {
		t.Skip("writes wideNameProfiles' profiles, run by it in a child process")
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	parked := 0
	park := func(n int) {
		for range n {
			wg.Add(1)
			go ユーザー管理サービスＶ２{}.計算する(release, &wg)
		}
		parked += n
		// Wait until every one waits in 計算する (a condition, not a
		// time): one started but not yet run has no stack.
		for deadline := time.Now().Add(5 * time.Second); waitingIn("計算する") < parked && time.Now().Before(deadline); {
			runtime.Gosched()
		}
	}
	park(1)
	captureGoroutines(t, filepath.Join(dir, "基準プロファイル.pb.gz"), false)
	park(5)
	captureGoroutines(t, filepath.Join(dir, "新しいプロファイル.pb.gz"), false)
	close(release)
	wg.Wait()
}

// waitingIn is the number of goroutines blocked on a channel in fn.
func waitingIn(fn string) int {
	buf := make([]byte, 1<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "[chan receive") && strings.Contains(g, "."+fn+"(") {
			n++
		}
	}
	return n
}

// ユーザー管理サービスＶ２ is a type named in Japanese ("user management
// service") and fullwidth letters: Go identifiers may be any Unicode
// letters.
type ユーザー管理サービスＶ２ struct{}

// 計算する ("calculate") waits until release closes.
//
//go:noinline
func (ユーザー管理サービスＶ２) 計算する(release <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	<-release
}

// Names and paths of wide characters (two columns each): diff and top of
// profiles the Go runtime wrote, named in Japanese, of a Go method named
// in Japanese and fullwidth letters, and a warning naming such a file,
// fit --width 80 and 40 in display columns, no line ending in a space,
// no rune cut in half; the names and files are shown.
func TestWideNamesFitWidth(t *testing.T) {
	base, new := wideNameProfiles(t)
	data, err := os.ReadFile(net10)
	if err != nil {
		t.Fatal(err)
	}
	// A line no reader takes: one warning that names the file.
	odd := filepath.Join(filepath.Dir(base), "変な行のあるプロファイル.folded")
	if err := os.WriteFile(odd, append(data, "a;b not-a-count\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string // in stdout
	}{
		{[]string{"diff", base, new}, []string{"基準プロファイル.pb.gz", "新しいプロファイル.pb.gz", "計算する"}},
		{[]string{"top", new}, []string{"新しいプロファイル.pb.gz", "計算する"}},
		{[]string{"top", odd}, []string{"変な行のあるプロファイル.folded"}},
	} {
		for _, w := range []int{80, 40} {
			args := append([]string{c.args[0], "--width", strconv.Itoa(w)}, c.args[1:]...)
			out, stderr, code := profdiff(t, "", args...)
			if code != 0 {
				t.Fatalf("%q: exit %d: %s", args, code, stderr)
			}
			for _, s := range []string{out, stderr} {
				if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
					t.Errorf("%q: half a rune: %q", args, s)
				}
				for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
					if n := displayWidth(l); n > w || strings.HasSuffix(l, " ") {
						t.Errorf("%q: a line of %d columns or ending in a space: %q", args, n, l)
					}
				}
			}
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("%q: no %q:\n%s", args, want, out)
				}
			}
			if c.args[1] == odd && !strings.Contains(unwrapped(stderr), "warning: 変な行のあるプロファイル.folded: line ") {
				t.Errorf("%q: no warning naming the file:\n%s", args, stderr)
			}
		}
	}
}
