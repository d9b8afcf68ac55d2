package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxJSONScan bounds the JSON text read for its top-level keys: a key that
// comes after a larger value is not seen (the substring tests of
// describeJSON still apply).
const maxJSONScan = 16 << 20

// jsonShape is what describeJSON reads of a JSON document: the keys of the
// top-level object, or of the first element of a top-level array, in
// order, and the "$schema" value when it is a string.
type jsonShape struct {
	array  bool
	keys   []string
	has    map[string]bool
	schema string
}

// readJSONShape decodes the top level of t (which starts with { or [),
// skipping values; a truncated or malformed document yields the keys read
// before the problem.
func readJSONShape(t string) jsonShape {
	sh := jsonShape{has: map[string]bool{}}
	dec := json.NewDecoder(strings.NewReader(t[:min(len(t), maxJSONScan)]))
	tok, err := dec.Token()
	if err != nil {
		return sh
	}
	if tok == json.Delim('[') {
		sh.array = true
		if tok, err = dec.Token(); err != nil || tok != json.Delim('{') {
			return sh
		}
	}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return sh
		}
		if !sh.has[key] {
			sh.keys = append(sh.keys, key)
			sh.has[key] = true
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return sh
		}
		if key == "$schema" {
			json.Unmarshal(v, &sh.schema) // a schema that is no string stays ""
		}
	}
	return sh
}

// describeJSON names what a JSON document that is not speedscope looks
// like: Chrome's trace-event format or .cpuprofile, V8 heap profiles,
// Firefox Profiler, stackprof, GHC's -pj profile, expvar's /debug/vars, a
// file that has speedscope's keys but not its $schema or frames, else its
// keys. head is the start of t, where the substring tests look when the
// keys could not be read. ours is set where the description names a format
// profdiff reads, whose reader's sniff refused the document (cut short, or
// without what that reader needs, which the description says): the error
// is then a malformed profile of that format, not an unknown format.
func describeJSON(t, head string) (what string, ours bool) {
	const viaSpeedscope = " (speedscope.app converts it to speedscope JSON)"
	const malformed = ", cut short or malformed: "
	sh := readJSONShape(t)
	has := sh.has
	switch {
	case has["traceEvents"] || sh.array && has["ph"] || len(sh.keys) == 0 && (strings.Contains(head, `"traceEvents"`) || strings.Contains(head, `"ph"`)):
		return "Chrome trace-event JSON" + malformed + `the reader wants a "traceEvents" array, or an array of events, that starts with a complete event`, true
	case has["nodes"] && (has["samples"] || has["timeDeltas"] || has["startTime"]),
		len(sh.keys) <= 1 && strings.Contains(head, `"nodes"`) && strings.Contains(head, `"callFrame"`):
		return "Chrome/V8 .cpuprofile JSON" + malformed + `the reader wants "nodes" first, then "samples" and "timeDeltas"`, true
	case has["head"] && (has["timestamps"] || has["startTime"]):
		// Node.js 10 and older Chrome: the call tree under "head", with
		// samples and timestamps; a heap profile has neither time key.
		return "Chrome/V8 .cpuprofile JSON in the older shape (a head tree)" + malformed + `the reader wants "head" first, then "samples" and "timestamps"`, true
	case has["head"] && (has["samples"] || strings.Contains(head, `"callFrame"`)):
		return "V8 sampling heap profile JSON (.heapprofile of Chrome DevTools or `node --heap-prof`), which holds allocated bytes, not time (record CPU time with `node --cpu-prof`, which writes a .cpuprofile)", false
	case has["snapshot"] && has["nodes"]:
		return "V8 heap snapshot JSON (.heapsnapshot), not a sampled profile", false
	case has["meta"] && has["threads"]:
		return "Firefox Profiler (Gecko) JSON" + malformed + `the reader wants "meta", "threads" and the threads' "stackTable" and "frameTable"`, true
	case has["label"] && has["duration"] && has["markers"] && has["ticks"]:
		// The export of Firefox DevTools' former performance panel,
		// whose Gecko profile is under "profile".
		return "Firefox DevTools performance recording JSON" + malformed + `the reader wants the Gecko profile under "profile", with "meta", "threads" and the threads' "stackTable" and "frameTable"`, true
	case has["mode"] && has["frames"]:
		return "stackprof JSON of Ruby" + malformed + `the reader wants "mode", "frames" and "gc_samples" (what stackprof --json writes)`, true
	case has["cost_centres"] && has["profile"]:
		return "GHC cost-centre profile JSON (`+RTS -pj`)" + viaSpeedscope, false
	case has["cmdline"] && has["memstats"]:
		return "expvar JSON (/debug/vars: runtime statistics, not a profile; the profiles are under /debug/pprof/)", false
	case !sh.array && (has["$schema"] || has["profiles"] || has["shared"]):
		return "JSON with some of speedscope's keys that is not a speedscope file: " + speedscopeLacks(sh), false
	case sh.array:
		return "a JSON array" + keyList(" of objects with keys %s", sh.keys), false
	case len(sh.keys) == 0:
		return "JSON without keys", false
	}
	return "JSON" + keyList(" with keys %s", sh.keys), false
}

// speedscopeLacks says why a document with speedscope's keys is not one:
// speedscope.Looks wants a $schema naming speedscope, or both
// "shared": {"frames": [...]} and "profiles".
func speedscopeLacks(sh jsonShape) string {
	var why []string
	switch {
	case !sh.has["$schema"]:
		why = append(why, `no "$schema"`)
	default:
		why = append(why, fmt.Sprintf(`"$schema" is %q`, truncate(sh.schema, 60)))
	}
	if !sh.has["shared"] {
		why = append(why, `no "shared" frames`)
	}
	if !sh.has["profiles"] {
		why = append(why, `no "profiles"`)
	}
	return strings.Join(why, ", ") + ` (speedscope files have "$schema": "https://www.speedscope.app/file-format-schema.json")`
}

// keyList formats up to 8 keys into format, or returns "" without keys.
// Keys are quoted only when they need it.
func keyList(format string, keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	var quoted []string
	for _, k := range keys[:min(len(keys), 8)] {
		if k == "" || strings.ContainsAny(k, " ,\"\\") || !utf8.ValidString(k) {
			k = strconv.Quote(k)
		}
		quoted = append(quoted, truncate(k, 40))
	}
	s := strings.Join(quoted, ", ")
	if len(keys) > 8 {
		s += ", …"
	}
	return fmt.Sprintf(format, s)
}

// jsonTokens reports whether t starts with at least a few valid JSON
// tokens (all of a short document): a folded file starting with
// `[unknown];...` or `{{closure}};...` fails at once.
func jsonTokens(t string) bool {
	dec := json.NewDecoder(strings.NewReader(t[:min(len(t), 64<<10)]))
	for i := 0; i < 8; i++ {
		if _, err := dec.Token(); err != nil {
			return err == io.EOF && i > 1
		}
	}
	return true
}

// jsonBreak says where data, the JSON text of a format profdiff reads whose
// reader refused it, stops being JSON: "; the JSON ends inside a value at
// byte N (a file cut short?)" where it ends early, "; invalid JSON at byte
// N: ..." where it breaks (encoding/json's offset, as the JSON readers
// give it), "" where the text is whole JSON (it then lacks what the reader
// needs). The decoder tells a cut (io.ErrUnexpectedEOF) from a bad byte at
// the end; it holds a copy of the value, as large as data, only here, on
// the way to an error.
func jsonBreak(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&struct{}{})
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("; the JSON ends inside a value at byte %d (a file cut short?)", len(data))
	case errors.As(err, &se):
		return fmt.Sprintf("; invalid JSON at byte %d: %v", se.Offset, se)
	}
	return ""
}
