package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/source"
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
it is 2 for bad usage, when no connection can be opened, or when the run
is interrupted (SIGINT, SIGTERM; the partial report is still written).

Only loopback hosts (127.0.0.0/8, ::1, localhost) are allowed unless
--allow-remote is given.
`

// loadFlags are the flags of 'profdiff load': the load generator's
// Config, filled in by the flags, and what is checked before it is used.
type loadFlags struct {
	cfg         loadgen.Config
	out         outputFlags
	headers     []string
	allowRemote bool
}

func loadCommand(fs *flag.FlagSet) runFunc {
	f := loadFlags{cfg: loadgen.Config{Dedicated: true}} // this process only generates the load
	fs.IntVarP(&f.cfg.Connections, "connections", "c", loadgen.DefaultConnections(), "connections, each with one request in flight; min(256, 64×NumCPU) by default")
	durationFlag(fs, &f.cfg.Duration, 10*time.Second, "measured window", false)
	durationVar(fs, &f.cfg.Warmup, "warmup", time.Second, "warmup before the window, not counted")
	durationVar(fs, &f.cfg.Timeout, "timeout", loadgen.DefaultTimeout, "per-request (and connect) timeout; a request past it is a timeout socket error")
	f.out.register(fs, textAndJSON...)
	fs.StringArrayVarP(&f.headers, "header", "H", nil, `extra request header "Name: value" (repeatable; replaces a default of the same name)`)
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a host that is not loopback")
	fs.StringVar(&f.cfg.Engine, "engine", loadgen.DefaultEngine(), "how connections are driven: epoll (event loops like wrk; Linux only, the default there) or goroutines (one per connection; the default elsewhere)")
	return func(ctx context.Context, e env, pos []string) error {
		o, err := f.out.resolve("load", e)
		if err != nil {
			return err
		}
		cfg, err := f.config(pos)
		if err != nil {
			return err
		}
		return runLoad(ctx, e, cfg, o)
	}
}

// config validates the flags and the URL into the load generator's Config.
func (f *loadFlags) config(pos []string) (loadgen.Config, error) {
	cfg := f.cfg
	switch {
	case len(pos) != 1:
		return cfg, usagef("load: want one URL, got %d arguments", len(pos))
	case cfg.Connections <= 0:
		return cfg, usagef("load: --connections must be positive, not %d", cfg.Connections)
	case checkDuration("load", cfg.Duration, false) != nil:
		return cfg, checkDuration("load", cfg.Duration, false)
	case cfg.Warmup < 0:
		return cfg, usagef("load: --warmup must not be negative, not %v", cfg.Warmup)
	case cfg.Timeout <= 0:
		return cfg, usagef("load: --timeout must be positive, not %v", cfg.Timeout)
	}
	cfg.URL = pos[0]
	if err := checkLoadURL(cfg.URL, f.allowRemote); err != nil {
		return cfg, err
	}
	cfg.Header = http.Header{}
	for _, kv := range f.headers {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return cfg, usagef("load: --header %q: want \"Name: value\"", kv)
		}
		cfg.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return cfg, nil
}

// runLoad drives the load and writes its report as o says. A run
// that stopped early (ctx ended) still writes what it measured, and its
// error, which run reports as the interruption, says how long it ran.
func runLoad(ctx context.Context, e env, cfg loadgen.Config, o output) error {
	rep, err := loadgen.Run(ctx, cfg)
	if rep == nil {
		return fmt.Errorf("load: %v", err)
	}
	if err != nil && ctx.Err() == nil {
		say(e.stderr, "load stopped early (%v); the report covers %.2fs", err, rep.DurationS)
	}
	if o.format == render.JSON {
		// Data stays on stdout; the warnings go to stderr as well so that
		// they are not missed.
		for _, w := range rep.Warnings() {
			say(e.stderr, "WARNING: %s", w)
		}
	}
	if werr := o.write(e.stdout, rep.Model()); werr != nil || ctx.Err() == nil {
		return werr
	}
	return fmt.Errorf("load stopped early; the report covers %.2fs", rep.DurationS)
}

// checkLoadURL allows http:// URLs only, and only loopback hosts unless
// allowRemote: this refuses to load someone else's server by a typo.
func checkLoadURL(raw string, allowRemote bool) error {
	u, shown, err := profile.ParseURL(raw) // no password in a message
	if err != nil {
		return usagef("load: bad URL %q: %v", shown, err)
	}
	if u.Scheme != "http" || u.Host == "" || u.Hostname() == "" {
		return usagef("load: bad URL %q: want http://HOST:PORT/PATH (only http:// is supported)", shown)
	}
	if allowRemote {
		return nil
	}
	host := u.Hostname()
	if source.IsLoopbackHost(host) {
		return nil
	}
	return usagef("load: %s is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to load a remote host", host)
}
