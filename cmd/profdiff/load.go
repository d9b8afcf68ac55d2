package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/profdiff/profdiff/workloads/loadgen"
)

const loadSynopsis = `  profdiff load [flags] URL

Drives URL (http:// only) with a closed-loop load like wrk: --connections
keep-alive connections, one request in flight on each, a discarded warmup,
then a measured window. Reports requests/s of 2xx responses, latency
p50/p90/p99/max of the 2xx responses (HDR histogram), non-2xx responses by
status code and socket errors by kind (connect, read, write, timeout).
When any request failed, the first line of the report is a WARNING: such
throughput is not saturation. The exit status stays 0 then (1 is for gates);
it is 2 for bad usage or when no connection can be opened.

Only loopback hosts (127.0.0.0/8, ::1, localhost) are allowed unless
--allow-remote is given.
`

func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		conns       int
		duration    time.Duration
		warmup      time.Duration
		timeout     time.Duration
		format      string
		headers     []string
		allowRemote bool
		engine      string
	)
	fs := newFlagSet("load", loadSynopsis, stderr)
	fs.IntVarP(&conns, "connections", "c", loadgen.DefaultConnections(), "connections, each with one request in flight; min(256, 64×NumCPU) by default")
	fs.DurationVarP(&duration, "duration", "d", 10*time.Second, "measured window")
	fs.DurationVar(&warmup, "warmup", time.Second, "warmup before the window, not counted")
	fs.DurationVar(&timeout, "timeout", loadgen.DefaultTimeout, "per-request (and connect) timeout; a request past it is a timeout socket error")
	fs.StringVar(&format, "format", "text", "output format: text or json")
	fs.StringArrayVarP(&headers, "header", "H", nil, `extra request header "Name: value" (repeatable; replaces a default of the same name)`)
	fs.BoolVar(&allowRemote, "allow-remote", false, "allow a host that is not loopback")
	fs.StringVar(&engine, "engine", loadgen.DefaultEngine(), "how connections are driven: epoll (event loops like wrk; Linux) or goroutines (one per connection)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("load: want one URL, got %d arguments", fs.NArg())
	}
	if format != "text" && format != "json" {
		return usagef("load: --format: unknown format %q (want text or json)", format)
	}
	if conns <= 0 {
		return usagef("load: --connections must be positive, not %d", conns)
	}
	if duration <= 0 {
		return usagef("load: --duration must be positive, not %v", duration)
	}
	if warmup < 0 {
		return usagef("load: --warmup must not be negative, not %v", warmup)
	}
	if timeout <= 0 {
		return usagef("load: --timeout must be positive, not %v", timeout)
	}
	rawURL := fs.Arg(0)
	if err := checkLoadURL(rawURL, allowRemote); err != nil {
		return err
	}
	h := http.Header{}
	for _, kv := range headers {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return usagef("load: --header %q: want \"Name: value\"", kv)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	rep, err := loadgen.Run(ctx, loadgen.Config{
		URL:         rawURL,
		Connections: conns,
		Duration:    duration,
		Warmup:      warmup,
		Timeout:     timeout,
		Header:      h,
		Engine:      engine,
		Dedicated:   true, // this process only generates the load
	})
	if rep == nil {
		return fmt.Errorf("load: %v", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "profdiff: load stopped early (%v); the report covers %.2fs\n", err, rep.DurationS)
	}
	if format == "json" {
		// Data stays on stdout; the warnings go to stderr as well so that
		// they are not missed.
		for _, w := range rep.Warnings() {
			fmt.Fprintf(stderr, "profdiff: WARNING: %s\n", w)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteText(stdout)
}

// checkLoadURL allows http:// URLs only, and only loopback hosts unless
// allowRemote: this refuses to load someone else's server by a typo.
func checkLoadURL(raw string, allowRemote bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return usagef("load: bad URL %q: %v", raw, err)
	}
	if u.Scheme != "http" || u.Host == "" || u.Hostname() == "" {
		return usagef("load: bad URL %q: want http://HOST:PORT/PATH (only http:// is supported)", raw)
	}
	if allowRemote {
		return nil
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usagef("load: %s is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to load a remote host", host)
}
