// Package benchgen writes large, realistic inputs for the readers'
// benchmarks at benchmark time, so that no large file is committed: folded
// stacks, `perf script` text and speedscope JSON made from the stacks of a
// package synth profile (a Go-like program: 15-45 frames per stack over
// thousands of functions, every stack distinct), and text replicated from a
// real capture up to a size.
package benchgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/synth"
)

// Stacks returns the stacks of a synth profile of n distinct stacks, root
// first, each frame a location (its outermost function: the symbol a
// sampler names at that address) with that location's address, and each
// stack's sample count.
func Stacks(n int) ([][]*pprofile.Location, []int64) {
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions = n, max(1000, n/10)
	p := synth.Generate(cfg)
	stacks := make([][]*pprofile.Location, len(p.Sample))
	counts := make([]int64, len(p.Sample))
	for i, s := range p.Sample {
		st := make([]*pprofile.Location, len(s.Location))
		for j, l := range s.Location {
			st[len(st)-1-j] = l
		}
		stacks[i] = st
		counts[i] = s.Value[0]
	}
	return stacks, counts
}

// name is the function a sampler names at l: the outermost of its lines.
func name(l *pprofile.Location) string { return l.Line[len(l.Line)-1].Function.Name }

// Folded writes n distinct stacks as folded text, one `a;b;c count` line
// each: about 1 KiB a line.
func Folded(n int) []byte {
	stacks, counts := Stacks(n)
	var b bytes.Buffer
	for i, st := range stacks {
		for j, l := range st {
			if j > 0 {
				b.WriteByte(';')
			}
			b.WriteString(name(l))
		}
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(counts[i], 10))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// PerfScript writes n samples of distinct stacks as `perf script` prints
// a `perf record -e cpu-clock -g` recording: a header line (comm, pid/tid,
// cpu, time, period, event), the stack leaf first, one
// `\t%16x sym+0xoff (dso)` line a frame, and a blank line.
func PerfScript(n int) []byte {
	stacks, counts := Stacks(n)
	var b bytes.Buffer
	var line []byte
	ts := int64(4794564_109216)
	for i, st := range stacks {
		tid := 4242 + i%8
		for range counts[i] {
			ts += 250 + int64(i%7)
			fmt.Fprintf(&b, "server 4242/%d [%03d] %d.%06d:     250000 cpu-clock:ppp: \n", tid, i%16, ts/1e6, ts%1e6)
			for j := len(st) - 1; j >= 0; j-- {
				l := st[j]
				line = append(line[:0], '\t')
				hex := strconv.FormatUint(l.Address, 16)
				for k := len(hex); k < 16; k++ {
					line = append(line, ' ')
				}
				line = append(line, hex...)
				line = append(line, ' ')
				line = append(line, name(l)...)
				line = append(line, "+0x"...)
				line = strconv.AppendUint(line, l.Address&0x7ff, 16)
				line = append(line, " ("...)
				line = append(line, dso(l)...)
				line = append(line, ")\n"...)
				b.Write(line)
			}
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func dso(l *pprofile.Location) string {
	if l.Mapping == nil || l.Mapping.File == "" {
		return "[unknown]"
	}
	return l.Mapping.File
}

// Speedscope writes n distinct stacks as one sampled speedscope profile
// in nanoseconds (a shared frame table with each function's file and
// line; root-first stacks of frame indexes; 10 ms weights).
func Speedscope(n int) []byte {
	stacks, counts := Stacks(n)
	type frame struct {
		Name string `json:"name"`
		File string `json:"file,omitempty"`
		Line int64  `json:"line,omitempty"`
	}
	var frames []frame
	index := map[uint64]int{}
	samples := make([][]int, len(stacks))
	weights := make([]int64, len(stacks))
	for i, st := range stacks {
		s := make([]int, len(st))
		for j, l := range st {
			k, ok := index[l.ID]
			if !ok {
				ln := l.Line[len(l.Line)-1]
				k = len(frames)
				frames = append(frames, frame{ln.Function.Name, ln.Function.Filename, ln.Line})
				index[l.ID] = k
			}
			s[j] = k
		}
		samples[i], weights[i] = s, counts[i]*synth.Period
	}
	var end int64
	for _, w := range weights {
		end += w
	}
	doc := map[string]any{
		"$schema": "https://www.speedscope.app/file-format-schema.json",
		"shared":  map[string]any{"frames": frames},
		"profiles": []any{map[string]any{
			"type": "sampled", "name": "server", "unit": "nanoseconds",
			"startValue": 0, "endValue": end, "samples": samples, "weights": weights,
		}},
		"name":     "server",
		"exporter": "benchgen",
	}
	out, err := json.Marshal(doc)
	if err != nil {
		panic(err) // only plain values above
	}
	return out
}

// Replicate repeats data until it is at least size bytes long (data
// itself when it is empty or long enough), putting sep between copies.
func Replicate(data []byte, size int, sep string) []byte {
	if len(data) == 0 || len(data) >= size {
		return data
	}
	out := make([]byte, 0, size+len(data)+len(sep))
	for len(out) < size {
		out = append(out, data...)
		out = append(out, sep...)
	}
	return out
}
