package main

import (
	"fmt"
	"io"
	"os"
	"testing"

	flag "github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/profdiff/profdiff/diff/render"
)

// openPty opens a pseudo-terminal of cols columns and returns its
// terminal side, as a program's stdout would be in a terminal window.
func openPty(t *testing.T, cols uint16) *os.File {
	t.Helper()
	_, pts := openPtyPair(t, cols)
	return pts
}

// openPtyPair is openPty with the terminal's other side, where what is
// written to the terminal side can be read.
func openPtyPair(t *testing.T, cols uint16) (ptmx, pts *os.File) {
	t.Helper()
	var err error
	ptmx, err = os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("cannot unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("no pseudo-terminal number: %v", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("cannot open the terminal side: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: cols}); err != nil {
		t.Fatal(err)
	}
	return ptmx, pts
}

// On a terminal, --width defaults to its width and --color auto colours
// unless NO_COLOR is set; an explicit flag wins. On a file neither.
func TestOutputOnTerminal(t *testing.T) {
	pts := openPty(t, 97)
	if w, ok := terminalWidth(pts); !ok || w != 97 {
		t.Fatalf("terminalWidth(pty) = %d, %v; want 97, true", w, ok)
	}
	file, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if w, ok := terminalWidth(file); ok || w != 0 {
		t.Errorf("terminalWidth(file) = %d, %v; want no terminal", w, ok)
	}
	for _, c := range []struct {
		noColor string
		args    []string
		tty     bool
		want    render.Options
	}{
		{"", nil, true, render.Options{Width: 97, Color: true}},
		{"1", nil, true, render.Options{Width: 97, Color: false}},
		{"1", []string{"--color", "always"}, true, render.Options{Width: 97, Color: true}},
		{"", []string{"--color", "never", "--width", "0"}, true, render.Options{Width: 0, Color: false}},
		{"", []string{"--width", "120"}, true, render.Options{Width: 120, Color: true}},
		{"", nil, false, render.Options{}},
		{"", []string{"--color", "ALWAYS", "--width", "80"}, false, render.Options{Width: 80, Color: true}},
	} {
		t.Setenv("NO_COLOR", c.noColor)
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		var o outputFlags
		o.register(fs, render.Formats...)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		stdout := file
		if c.tty {
			stdout = pts
		}
		got, err := o.resolve("x", env{stdout: stdout, stderr: io.Discard})
		if err != nil || got.opts != c.want || got.format != render.Table {
			t.Errorf("NO_COLOR=%q %q on tty=%v: %+v, %v; want %+v", c.noColor, c.args, c.tty, got, err, c.want)
		}
	}
}
