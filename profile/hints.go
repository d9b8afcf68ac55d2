package profile

import (
	"regexp"
	"strings"
)

// schemelessURL matches what is meant as the URL of a /debug/pprof
// endpoint without its scheme: host:port with an optional path
// (127.0.0.1:6060/debug/pprof/heap, localhost:6060, [::1]:6060/...,
// :6060/debug/pprof/profile?seconds=5), or any host with a /debug/ path
// (localhost/debug/pprof/heap).
var schemelessURL = regexp.MustCompile(`^((localhost|\d{1,3}(\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*)?:\d{1,5}(/\S*)?|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*/debug/\S*)$`)

// GuessURL returns the http:// URL that source, when it is no file, was
// probably meant as (127.0.0.1:6060/debug/pprof/heap without its scheme),
// or "" when it does not look like one. Load says so in its error.
func GuessURL(source string) string {
	if !schemelessURL.MatchString(source) {
		return ""
	}
	if strings.HasPrefix(source, ":") {
		return "http://localhost" + source
	}
	return "http://" + source
}

// hintError is an error reading a source reworded with what was probably
// meant; it still unwraps to the os error.
type hintError struct {
	msg string
	err error
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }
