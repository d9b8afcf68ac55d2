package speedscope

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/corpus"
)

// corpusDir is the shared corpus folder; the test skips when it is absent.
func corpusDir(t *testing.T) string {
	t.Helper()
	return corpus.Need(t)
}

// corpusInvalid maps invalid speedscope files of the corpus to what their
// error must say.
var corpusInvalid = map[string]string{
	"incomplete-trace.json":    "still open after the last event",
	"out-of-order-events.json": "not the innermost open frame",
}

// corpusStacks holds known per-stack values ("thread|root;...;leaf") of
// valid speedscope files in the corpus, in the profile's default type.
var corpusStacks = map[string]map[string]int64{
	"0.0.1__simple.speedscope.json":                 {"simple.txt|a;b;c": 5, "simple.txt|a;b;d": 4, "simple.txt|a;b": 5},
	"0.0.1__simple-no-pretty-print.speedscope.json": {"simple.txt|a;b;c": 5, "simple.txt|a;b;d": 4, "simple.txt|a;b": 5},
	"0.1.2__simple-sampled.speedscope.json":         {"simple.speedscope.json|a;b;c": 5e9, "simple.speedscope.json|a;b;d": 4e9, "simple.speedscope.json|a;b": 5e9},
	"0.6.0__two-sampled.speedscope.json":            {"one|a;b;c": 5e9, "one|a;b;d": 4e9, "one|a;b": 5e9, "two|a;b;c": 5e9, "two|a;b;d": 4e9, "two|a;b": 5e9},
}

// expectation is what a speedscope file holds, computed from a plain decode
// independently of Parse.
type expectation struct {
	total   float64 // in nanoseconds for time units, else in the file's unit
	samples int64   // number of non-empty samples of sampled profiles
	threads map[string]bool
	frames  []string
	timed   bool
}

func expect(t *testing.T, data []byte) expectation {
	t.Helper()
	var f struct {
		Shared struct {
			Frames []struct {
				Name string `json:"name"`
			} `json:"frames"`
		} `json:"shared"`
		Profiles []struct {
			Type    string    `json:"type"`
			Name    string    `json:"name"`
			Unit    string    `json:"unit"`
			Samples [][]int   `json:"samples"`
			Weights []float64 `json:"weights"`
			Events  []struct {
				Type string  `json:"type"`
				At   float64 `json:"at"`
			} `json:"events"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("plain decode: %v", err)
	}
	mult := map[string]float64{"nanoseconds": 1, "microseconds": 1e3, "milliseconds": 1e6, "seconds": 1e9}
	e := expectation{threads: map[string]bool{}}
	for _, fr := range f.Shared.Frames {
		e.frames = append(e.frames, fr.Name)
	}
	for _, p := range f.Profiles {
		m, ok := mult[p.Unit]
		if ok {
			e.timed = true
		} else {
			m = 1
		}
		e.threads[p.Name] = true
		switch p.Type {
		case "sampled":
			for i, s := range p.Samples {
				if len(s) > 0 {
					e.total += p.Weights[i] * m
					e.samples++
				}
			}
		case "evented":
			depth := 0
			prev := 0.0
			for _, ev := range p.Events {
				if depth > 0 {
					e.total += (ev.At - prev) * m
				}
				prev = ev.At
				if ev.Type == "O" {
					depth++
				} else {
					depth--
				}
			}
		}
	}
	return e
}

func readCorpusFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return data
		}
		out, err := io.ReadAll(io.LimitReader(zr, 256<<20))
		if err != nil {
			return data
		}
		return out
	}
	return data
}

// TestCorpus checks Looks against the index's format column for every file
// of the shared corpus, and parses every speedscope file: valid ones must
// hold the totals and frames a plain decode finds, invalid ones must fail
// saying why.
func TestCorpus(t *testing.T) {
	dir := corpusDir(t)
	if dir == "" {
		t.Skip("../shared/corpus not found")
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.tsv"))
	if err != nil {
		t.Skipf("no corpus index: %v", err)
	}
	parsed, rejected, looked := 0, 0, 0
	for i, line := range strings.Split(strings.TrimSpace(string(index)), "\n") {
		cols := strings.Split(line, "\t")
		if i == 0 || len(cols) < 2 {
			continue
		}
		name, format := cols[0], cols[1]
		path := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := os.Stat(path); err != nil {
			continue
		}
		data := readCorpusFile(t, path)
		isSpeedscope := format == "speedscope-json"
		if got := Looks(data); got != isSpeedscope {
			t.Errorf("%s (%s): Looks = %v, want %v", name, format, got, isSpeedscope)
		}
		if !isSpeedscope {
			// Whatever else it is, Parse must refuse it without panicking.
			if _, _, err := Parse(data); err == nil && strings.Contains(format, "json") {
				t.Errorf("%s (%s): Parse accepted a non-speedscope file", name, format)
			}
			continue
		}
		looked++
		p, warns, err := Parse(data)
		if strings.Contains(name, "invalid") {
			if err == nil {
				t.Errorf("%s: Parse accepted an invalid file", name)
				continue
			}
			rejected++
			for suffix, want := range corpusInvalid {
				if strings.HasSuffix(name, suffix) && !strings.Contains(err.Error(), want) {
					t.Errorf("%s: error %q does not say %q", name, err, want)
				}
			}
			t.Logf("%s: rejected: %v", name, err)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		parsed++
		if err := p.CheckValid(); err != nil {
			t.Errorf("%s: CheckValid: %v", name, err)
		}
		e := expect(t, data)
		vi := len(p.SampleType) - 1
		var total float64
		var count int64
		threads := map[string]bool{}
		funcs := map[string]bool{}
		for _, s := range p.Sample {
			total += float64(s.Value[vi])
			if len(s.Value) > 1 {
				count += s.Value[0]
			}
			threads[s.Label["thread"][0]] = true
		}
		for _, f := range p.Function {
			funcs[f.Name] = true
		}
		// Each sample's value is rounded once.
		if math.Abs(total-e.total) > float64(len(p.Sample)) {
			t.Errorf("%s: total %v, want %v", name, total, e.total)
		}
		if len(p.SampleType) > 1 && count != e.samples {
			t.Errorf("%s: %d samples counted, want %d", name, count, e.samples)
		}
		for th := range e.threads {
			if !threads[th] {
				t.Errorf("%s: no samples of thread %q (have %v)", name, th, threads)
			}
		}
		if len(e.frames) == 0 || !funcs[e.frames[0]] {
			t.Errorf("%s: no function for frame %v (have %v)", name, e.frames, funcs)
		}
		for suffix, want := range corpusStacks {
			if strings.HasSuffix(name, suffix) {
				got := stackValues(p, vi)
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: %s = %d, want %d", name, k, got[k], v)
					}
				}
			}
		}
		t.Logf("%s: %d samples, %s, total %v, threads %d, warnings %q", name, len(p.Sample), sampleTypes(p), total, len(threads), warns)
	}
	if looked == 0 {
		t.Error("no speedscope file in the corpus index")
	}
	t.Logf("speedscope files: %d parsed, %d rejected", parsed, rejected)
}
