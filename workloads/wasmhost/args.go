package wasmhost

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// ParseSize reads a byte size: a plain count ("65536") or a count with a
// binary unit, KiB, MiB or GiB (also k/K, m/M, g/G, KB, MB, GB, all taken
// as powers of 1024, as Wasmtime's documentation means them).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	lower := strings.ToLower(t)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(lower, u.suffix) {
			mult = u.mult
			t = strings.TrimSpace(t[:len(t)-len(u.suffix)])
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%q is not a byte size (want e.g. 0, 65536, 64KiB, 1MiB)", s)
	}
	return n * mult, nil
}

// FormatSize writes a byte size the way ParseSize reads it, in the largest
// binary unit that divides it exactly.
func FormatSize(n int64) string {
	switch {
	case n == 0:
		return "0"
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10)
}

// Args encodes the configuration for a child process (ParseArgs reads it
// back), in flag syntax of the child's own; these are not profdiff's
// command-line flags. Log and LogEvery are not carried.
func (c Config) Args() []string {
	a := []string{
		"--keep-resident=" + strconv.FormatInt(c.KeepResident, 10),
		"--pool-size=" + strconv.Itoa(c.PoolSize),
		"--pages=" + strconv.Itoa(c.Pages),
		"--touch=" + strconv.Itoa(c.Touch),
		"--timeout=" + c.Timeout.String(),
		"--modules=" + strconv.Itoa(c.Modules),
	}
	if c.MaxUnusedWarm != nil {
		a = append(a, "--max-unused-warm-slots="+strconv.Itoa(*c.MaxUnusedWarm))
	}
	if c.Interpreter {
		a = append(a, "--interpreter")
	}
	return a
}

// ParseArgs reads a configuration written by Config.Args.
func ParseArgs(args []string) (Config, error) {
	var c Config
	var keep, touch string
	fs := pflag.NewFlagSet("wasm", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&keep, "keep-resident", "0", "")
	fs.IntVar(&c.PoolSize, "pool-size", 0, "")
	fs.IntVar(&c.Pages, "pages", 0, "")
	fs.StringVar(&touch, "touch", "0", "")
	fs.DurationVar(&c.Timeout, "timeout", 0, "")
	fs.BoolVar(&c.Interpreter, "interpreter", false, "")
	fs.IntVar(&c.Modules, "modules", 0, "")
	warm := fs.Int("max-unused-warm-slots", DefaultMaxUnusedWarmSlots, "")
	if err := fs.Parse(args); err != nil {
		return Config{}, fmt.Errorf("wasm host arguments: %w", err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("wasm host arguments: unexpected %q", fs.Arg(0))
	}
	if fs.Changed("max-unused-warm-slots") {
		c.MaxUnusedWarm = warm
	}
	var err error
	if c.KeepResident, err = ParseSize(keep); err != nil {
		return Config{}, fmt.Errorf("wasm host arguments: keep-resident: %w", err)
	}
	t, err := ParseSize(touch)
	if err != nil {
		return Config{}, fmt.Errorf("wasm host arguments: touch: %w", err)
	}
	c.Touch = int(t)
	if c.Timeout < 0 {
		return Config{}, errors.New("wasm host arguments: the timeout must not be negative")
	}
	return c, nil
}
