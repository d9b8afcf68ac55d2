package profile

import (
	"net/url"
	"regexp"
	"strings"
)

// htmlStart matches the start of an HTML document: a doctype or one of the
// tags a page starts with. A folded line never starts so (it would end in a
// count, which sniffHTML checks too).
var htmlStart = regexp.MustCompile(`(?i)^\s*(<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<title[\s>]|<meta[\s>])`)

// pprofIndexMark is in the /debug/pprof/ index page that net/http/pprof's
// Index serves ("Types of profiles available:" and this title).
const pprofIndexMark = "<title>/debug/pprof/</title>"

// sniffHTML names an HTML page, or returns "": the /debug/pprof/ index
// page with the profile URLs to use instead (under source when it is its
// URL), or any other page.
func sniffHTML(text, source string) string {
	first := firstLines(text[:min(len(text), 4096)], 1)
	if len(first) == 0 || !htmlStart.MatchString(first[0]) || foldedCountRE.MatchString(first[0]) {
		return ""
	}
	if !strings.Contains(text[:min(len(text), 64<<10)], pprofIndexMark) {
		return "an HTML page, not a profile"
	}
	base := pprofIndexBase(source)
	return "the /debug/pprof/ index page (HTML), not a profile; read a profile listed on it: " +
		base + "profile?seconds=30 (CPU), " + base + "heap, …/mutex, …/block, …/goroutine, or …/trace?seconds=5 (execution trace)"
}

// pprofIndexBase is the URL of the /debug/pprof/ page that source names,
// ending in a slash, or "http://HOST:PORT/debug/pprof/" when source is not
// such a URL (a saved page).
func pprofIndexBase(source string) string {
	u, err := url.Parse(source)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "http://HOST:PORT/debug/pprof/"
	}
	p := u.Path
	if i := strings.Index(p, "/debug/pprof"); i >= 0 {
		p = p[:i]
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = strings.TrimRight(p, "/")+"/debug/pprof/", "", "", ""
	return u.String()
}

// isPprofCmdline reports whether source is the URL of net/http/pprof's
// cmdline page, whose NUL-separated arguments look binary.
func isPprofCmdline(source string) bool {
	u, err := url.Parse(source)
	return err == nil && u.Host != "" && strings.HasSuffix(u.Path, "/debug/pprof/cmdline")
}
