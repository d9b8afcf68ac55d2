//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"io"

	"golang.org/x/sys/unix"
)

// terminalWidth returns the width in columns of the terminal w writes to;
// ok is false when w is not a terminal (a pipe, a file, a buffer). A
// terminal that reports no width has width 0.
func terminalWidth(w io.Writer) (width int, ok bool) {
	f, isFile := w.(interface{ Fd() uintptr })
	if !isFile {
		return 0, false
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, false
	}
	return int(ws.Col), true
}
