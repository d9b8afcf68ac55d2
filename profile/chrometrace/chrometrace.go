// Package chrometrace reads Chrome Trace Event JSON: DevTools performance
// traces, chrome://tracing and Perfetto JSON exports, and Node.js
// `--trace-events-enabled` files. Both shapes are read, a bare array of
// events and an object with "traceEvents", and so is a file cut off inside
// the array, as Chrome leaves it when tracing stops early (with a warning).
//
// A trace gives one of three things, in this order of preference:
//
//   - V8's sampled CPU profiles (Profile/ProfileChunk events, or the older
//     single CpuProfile event): each sample is a stack of the thread that
//     recorded it, weighted by the time to that thread's next sample;
//   - the samples of a trace's "samples"/"stackFrames" (Hermes, catapult),
//     weighted the same way;
//   - otherwise its duration events (X, B/E, and async b/e on a track of
//     their own), nested into stacks per thread: each stack gets the time
//     spent in its innermost event and in none of that event's children.
//     An X event without "dur" lasts its "tdur" (its thread-clock
//     duration, the only one it gives; with a warning), as speedscope
//     reads it. An event without a name is the frame "(unnamed)".
//
// Every profile's values are wall/nanoseconds (and samples/count for the
// sampled ones), labelled with the thread; the profile's comment says which
// of the three it holds. V8's pseudo-frames are labelled so that they are
// never cpu by accident: (idle) is wait, (garbage collector) gc, and
// (program) (time V8 cannot place in JavaScript: native code or the
// embedder) the unknown fallback.
package chrometrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"
)

const (
	// MaxDepth is the deepest stack Parse accepts.
	MaxDepth = 1 << 16
	// MaxFrameRefs bounds the frame references of the resulting profile
	// (the sum of its distinct samples' stack depths); smaller inputs get
	// a smaller bound, 4 references per byte.
	MaxFrameRefs = 1 << 26
)

// Comments that say which part of a trace a profile holds.
const (
	CommentV8Samples    = "profdiff: V8 CPU profile samples from a Chrome trace"
	CommentStackSamples = "profdiff: stackFrames samples from a Chrome trace"
	CommentDurations    = "profdiff: time in duration events of a Chrome trace (it holds no CPU samples)"
)

// Looks reports whether data, JSON text, is a Chrome trace: an object with
// a top-level "traceEvents" key, or an array whose first element has a
// "ph" (the phase every trace event carries), even when the data ends
// inside that element.
func Looks(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	if tok == json.Delim('{') {
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return false
			}
			if k == "traceEvents" {
				return true
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return false
			}
		}
		return false
	}
	if tok != json.Delim('[') {
		return false
	}
	dec = json.NewDecoder(bytes.NewReader(data[:min(len(data), 1<<20)]))
	dec.Token()
	var first map[string]json.RawMessage
	if err := dec.Decode(&first); err != nil {
		// A first event cut off by the end of the data still counts.
		return cutOff(err) && bytes.Contains(data[:min(len(data), 1<<20)], []byte(`"ph"`))
	}
	_, ok := first["ph"]
	return ok
}

// num is a JSON number that some producers write as a string ("ts": "115").
type num float64

func (n *num) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%s is not a finite number", b)
	}
	*n = num(f)
	return nil
}

// id is a process, thread or event id: a number or a string, kept as text.
type id string

func (i *id) UnmarshalJSON(b []byte) error {
	*i = id(strings.Trim(string(b), `"`))
	return nil
}

type event struct {
	Ph   string          `json:"ph"`
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Ts   num             `json:"ts"`
	Dur  *num            `json:"dur"`
	Tdur *num            `json:"tdur"` // thread time, the duration of an X event without "dur"
	Pid  id              `json:"pid"`
	Tid  id              `json:"tid"`
	ID   id              `json:"id"`
	Args json.RawMessage `json:"args"`
}

type callFrame struct {
	FunctionName string `json:"functionName"`
	URL          string `json:"url"`
	LineNumber   *num   `json:"lineNumber"`
}

type cpuNode struct {
	ID        int64     `json:"id"`
	CallFrame callFrame `json:"callFrame"`
	Parent    *int64    `json:"parent"`
	Children  []int64   `json:"children"`
}

type cpuProfile struct {
	Nodes      []cpuNode `json:"nodes"`
	Samples    []int64   `json:"samples"`
	TimeDeltas []num     `json:"timeDeltas"`
	StartTime  *num      `json:"startTime"`
}

// profileArgs is the args of Profile, ProfileChunk and CpuProfile events.
type profileArgs struct {
	Data struct {
		StartTime  *num        `json:"startTime"`
		CPUProfile *cpuProfile `json:"cpuProfile"`
		TimeDeltas []num       `json:"timeDeltas"`
	} `json:"data"`
}

type stackSample struct {
	Pid    id  `json:"pid"`
	Tid    id  `json:"tid"`
	Ts     num `json:"ts"`
	Weight num `json:"weight"`
	SF     id  `json:"sf"`
}

type stackFrame struct {
	Name   string `json:"name"`
	Parent *id    `json:"parent"`
}

// doc is what a trace file holds.
type doc struct {
	events      []event
	samples     []stackSample
	stackFrames map[id]stackFrame
	truncated   bool
}

// Parse reads a Chrome trace from JSON text.
func Parse(data []byte) (*pprofile.Profile, []string, error) {
	d, err := decode(data)
	if err != nil {
		return nil, nil, err
	}
	if d.truncated && len(d.events) == 0 && len(d.samples) == 0 {
		// Nothing was read to warn about: the cut is the whole story.
		return nil, nil, fmt.Errorf("the file ends at byte %d inside its event array, before its first event is complete (a file cut short?)", len(data))
	}
	var warns []string
	if d.truncated {
		warns = append(warns, fmt.Sprintf("the file ends inside its event array after %d events (tracing stopped early?); read them", len(d.events)))
	}
	r := newReader(d, len(data))
	v8, err := r.v8()
	if err != nil {
		return nil, nil, err
	}
	var p *pprofile.Profile
	switch {
	case v8:
		p, err = r.finishSampled(CommentV8Samples)
		if r.durations > 0 {
			warns = append(warns, fmt.Sprintf("read the V8 CPU samples; the trace's %d duration events are left out", r.durations))
		}
	case len(d.samples) > 0:
		if err = r.stackSamples(); err == nil {
			p, err = r.finishSampled(CommentStackSamples)
		}
		if r.durations > 0 {
			warns = append(warns, fmt.Sprintf("read the stackFrames samples; the trace's %d duration events are left out", r.durations))
		}
	default:
		r.nest()
		p, err = r.finishDurations()
	}
	if err != nil {
		return nil, nil, err
	}
	return p, append(warns, r.warnings()...), nil
}

// decode reads the two shapes, stopping without error where the data ends
// inside the event array.
func decode(data []byte) (*doc, error) {
	d := &doc{}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if tok == json.Delim('[') {
		return d, d.readEvents(dec)
	}
	if tok != json.Delim('{') {
		return nil, errors.New("neither a JSON array nor an object")
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("at byte %d: %v", dec.InputOffset(), err)
		}
		switch k {
		case "traceEvents":
			if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
				return nil, fmt.Errorf("traceEvents at byte %d is not an array", dec.InputOffset())
			}
			if err := d.readEvents(dec); err != nil || d.truncated {
				return d, err
			}
		case "samples":
			if err := dec.Decode(&d.samples); err != nil {
				return nil, fmt.Errorf("samples: %v", err)
			}
		case "stackFrames":
			if err := dec.Decode(&d.stackFrames); err != nil {
				return nil, fmt.Errorf("stackFrames: %v", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				if cutOff(err) {
					return d, nil // cut off after the events: they are all read
				}
				return nil, fmt.Errorf("%q: %v", k, err)
			}
		}
	}
	return d, nil
}

// cutOff reports whether err is the JSON decoder's end of data.
func cutOff(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }

// readEvents reads the events of an array whose '[' was read, up to its
// ']' or the end of the data (truncated).
func (d *doc) readEvents(dec *json.Decoder) error {
	for dec.More() {
		var e event
		if err := dec.Decode(&e); err != nil {
			if cutOff(err) {
				d.truncated = true
				return nil
			}
			return fmt.Errorf("traceEvents[%d] (byte %d): %v", len(d.events), dec.InputOffset(), err)
		}
		switch {
		case e.Ph == "M", e.Name == "Profile", e.Name == "ProfileChunk", e.Name == "CpuProfile":
		default:
			e.Args = nil // only metadata and V8's profile events are read from their args
		}
		d.events = append(d.events, e)
	}
	if _, err := dec.Token(); err != nil {
		if cutOff(err) {
			d.truncated = true
			return nil
		}
		return fmt.Errorf("after traceEvents[%d] (byte %d): %v", len(d.events), dec.InputOffset(), err)
	}
	return nil
}
