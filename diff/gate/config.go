package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Config is a gate configuration file, JSON, meant to be checked into the
// repository it gates:
//
//	{
//	  "alpha": 0.05,
//	  "max": {
//	    "lock-contention": "+2pp",
//	    "wait": "+5pp",
//	    "gc": "+25%"
//	  },
//	  "max_method": {
//	    "sync\\.\\(\\*Mutex\\)\\.Lock": "+1pp"
//	  }
//	}
//
// Every field is optional. "max" maps a bucket (cpu, wait, lock-contention,
// gc, io, syscall) or "sync" to a threshold; "max_method" maps a regexp
// (JSON-escaped: each backslash doubled) to a threshold. Thresholds are
// written as on the command line: +Npp or +N%. Unknown fields are errors,
// so a misspelt key does not silently drop a check. Command-line flags
// override entries with the same name, and --alpha overrides "alpha".
type Config struct {
	Alpha     *float64          `json:"alpha,omitempty"`
	Max       map[string]string `json:"max,omitempty"`
	MaxMethod map[string]string `json:"max_method,omitempty"`
}

// ParseConfig reads a configuration file's content; name is used in errors.
// It returns the config and its checks (buckets in report order, then
// methods sorted by regexp).
func ParseConfig(name string, data []byte) (*Config, []Check, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, nil, fmt.Errorf("%s: %s", name, jsonError(data, err))
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("%s: text after the JSON object; the file holds one object", name)
	}
	if c.Alpha != nil {
		if err := CheckAlpha(*c.Alpha); err != nil {
			return nil, nil, fmt.Errorf("%s: \"alpha\": %v", name, err)
		}
	}
	var checks []Check
	for _, k := range sortedKeys(c.Max) {
		ch, err := bucketCheck(k, c.Max[k])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: \"max\": %v", name, err)
		}
		checks = append(checks, ch)
	}
	for _, k := range sortedKeys(c.MaxMethod) {
		ch, err := methodCheck(k, c.MaxMethod[k])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: \"max_method\": %v", name, err)
		}
		checks = append(checks, ch)
	}
	sortChecks(checks)
	return &c, checks, nil
}

// CheckAlpha validates a significance level.
func CheckAlpha(a float64) error {
	if !(a > 0 && a < 1) {
		return fmt.Errorf("alpha %g is not between 0 and 1 (exclusive); 0.05 is the usual choice", a)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// jsonError turns a decoding error into "line N: what", with a hint for the
// usual mistake in regexp keys.
func jsonError(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	msg := err.Error()
	if off >= 0 {
		line := 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n"))
		msg = fmt.Sprintf("line %d: %s", line, msg)
	}
	if strings.Contains(msg, "invalid character") && strings.Contains(msg, "escape") {
		msg += ` (in JSON a regexp's backslash is written twice: "sync\\.Mutex")`
	}
	if strings.Contains(msg, "unknown field") {
		msg += ` (known fields: "alpha", "max", "max_method")`
	}
	return msg
}
