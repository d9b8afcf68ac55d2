package main

import (
	"strings"
	"testing"
	"time"

	flag "github.com/spf13/pflag"
)

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"10", 10 * time.Second, ""},
		{"2.5", 2500 * time.Millisecond, ""},
		{" 3 ", 3 * time.Second, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"1m30s", 90 * time.Second, ""},
		{"-1", -time.Second, ""}, // parsed; checkDuration refuses it
		{"ten", 0, `"ten" is not a duration`},
		{"10 s", 0, "not a duration"},
		{"1e300", 0, "out of range"},
		{"NaN", 0, "out of range"},
		{"999999999999s", 0, "999999999999s is out of range (at most 24h0m0s)"},
		{"3000000h", 0, "out of range"},
		{"10x", 0, "not a duration"},
	} {
		got, err := parseDuration(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseDuration(%q) = %v, %v; want error %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestCheckDuration(t *testing.T) {
	for _, c := range []struct {
		d     time.Duration
		whole bool
		err   string
	}{
		{time.Second, true, ""},
		{1500 * time.Millisecond, false, ""},
		{1500 * time.Millisecond, true, "use 1s or 2s"},
		{200 * time.Millisecond, true, "use 1s"},
		{0, false, "--duration must be positive, not 0s"},
		{-time.Second, true, "must be positive"},
		{25 * time.Hour, false, "longer than the 24h0m0s allowed"},
	} {
		err := checkDuration("x", c.d, c.whole)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "x: ")) {
			t.Errorf("checkDuration(%v, %v) = %v; want %q", c.d, c.whole, err, c.err)
		}
	}
}

// --duration and the hidden --seconds set the same value, with the same
// words; -d is --duration's short form.
func TestDurationFlagAndAlias(t *testing.T) {
	for _, args := range [][]string{{"--duration", "7"}, {"--seconds", "7"}, {"-d", "7s"}, {"--seconds=7000ms"}} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		var d time.Duration
		durationFlag(fs, &d, 3*time.Second, "window", true)
		if err := fs.Parse(args); err != nil || d != 7*time.Second {
			t.Errorf("%q: %v, %v; want 7s", args, d, err)
		}
		if !fs.Lookup("seconds").Hidden || strings.Contains(fs.FlagUsages(), "--seconds") {
			t.Errorf("--seconds is not hidden:\n%s", fs.FlagUsages())
		}
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var d time.Duration
	durationFlag(fs, &d, 3*time.Second, "window", false)
	if d != 3*time.Second || fs.Lookup("seconds") != nil || !strings.Contains(fs.FlagUsages(), `-d, --duration duration`) || !strings.Contains(fs.FlagUsages(), "(default 3s)") {
		t.Errorf("default %v; usage:\n%s", d, fs.FlagUsages())
	}
}

// Every command with a window takes --duration; the commands that had
// --seconds still take it, and bad values are usage errors naming the
// command.
func TestDurationEverywhere(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--duration", "0"}, "demo: --duration must be positive"},
		{[]string{"demo", "--seconds", "1.5"}, "demo: --duration 1.5s: profiles are captured over whole seconds"},
		{[]string{"workload", "json", "-d", "2h", "--cores", "x"}, "--cores"},
		{[]string{"workload", "json", "-d", "25h"}, "workload json: --duration 25h0m0s is longer"},
		{[]string{"workload", "wasm", "--duration", "500ms"}, "workload wasm: --duration 500ms"},
		{[]string{"capture", "--duration", "x", "http://127.0.0.1:1"}, `invalid argument "x" for "-d, --duration" flag`},
		{[]string{"capture", "--seconds", "-3", "--out", "o", "http://127.0.0.1:1"}, "capture: --duration must be positive"},
		{[]string{"load", "-d", "0", "http://127.0.0.1:1/"}, "load: --duration must be positive"},
		{[]string{"load", "--seconds", "1", "http://127.0.0.1:1/"}, "unknown flag: --seconds"},
		// --warmup and --timeout take the same words.
		{[]string{"workload", "json", "--warmup", "0.5", "--cores", "x"}, "--cores"},
		{[]string{"load", "--warmup", "0.25", "--timeout", "soon", "http://127.0.0.1:1/"}, `invalid argument "soon" for "--timeout" flag: "soon" is not a duration`},
		{[]string{"load", "--warmup", "-0.5", "http://127.0.0.1:1/"}, "--warmup must not be negative"},
	} {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
