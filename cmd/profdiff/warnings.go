package main

import (
	"fmt"
	"io"
)

// warn prints warnings on w, one line each.
func warn(w io.Writer, msgs ...string) {
	for _, m := range msgs {
		fmt.Fprintf(w, "profdiff: warning: %s\n", m)
	}
}
