//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "io"

// terminalWidth reports no terminal where profdiff cannot ask for one:
// tables are unlimited and uncoloured unless --width and --color say.
func terminalWidth(io.Writer) (width int, ok bool) { return 0, false }
