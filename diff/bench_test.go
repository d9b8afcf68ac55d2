package diff

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/inflate"
	"github.com/profdiff/profdiff/profile/synth"
)

// benchPair generates a synthetic base/new pair of the given size.
func benchPair(b testing.TB, stacks int) [2]*profile.Loaded {
	b.Helper()
	var ls [2]*profile.Loaded
	for i, side := range []synth.Side{synth.Base, synth.New} {
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Functions, cfg.Side = stacks, max(1000, stacks/10), side
		p := synth.Generate(cfg)
		ls[i] = &profile.Loaded{Source: fmt.Sprintf("synth-%s", result.Side(i)), Format: "pprof", Kind: profile.DetectKind(p), Profile: p}
	}
	return ls
}

// BenchmarkAnalyzer measures Add (both sides) and Diff on synthetic Go CPU
// profiles of 15-45 frames per stack: go test ./diff -bench Analyzer -benchmem
//
// The tree=picture variants also build the merged call tree as the html
// and svg formats ask for it (subtrees under 1/5000 merged), whose cost
// the html format's budget (1.5x the JSON diff) must hold.
func BenchmarkAnalyzer(b *testing.B) {
	for _, c := range []struct {
		n    int
		tree bool
	}{{20_000, false}, {200_000, false}, {200_000, true}} {
		name := fmt.Sprintf("stacks=%d", c.n)
		if c.tree {
			name += "/tree=picture"
		}
		n := c.n
		b.Run(name, func(b *testing.B) {
			ls := benchPair(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				a := NewAnalyzer(Options{CallTree: c.tree, TreeMin: 1.0 / 5000})
				for side, l := range ls {
					if err := a.Add(result.Side(side), l); err != nil {
						b.Fatal(err)
					}
				}
				if r := a.Diff(); len(r.Methods) == 0 {
					b.Fatal("no method rows")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/stack")
		})
	}
}

// benchRaw reads a generated pair's files as profile.Raw (decompressed
// bytes), the streaming decoder's input.
func benchRaw(b testing.TB, stacks int) [2]*profile.Raw {
	return benchRawOf(b, stacks, max(1000, stacks/10))
}

// benchRawOf is benchRaw of a pair over the given number of functions.
func benchRawOf(b testing.TB, stacks, functions int) [2]*profile.Raw {
	b.Helper()
	dir := b.TempDir()
	var rs [2]*profile.Raw
	for i, side := range []synth.Side{synth.Base, synth.New} {
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Functions, cfg.Side = stacks, functions, side
		p := synth.Generate(cfg)
		name := filepath.Join(dir, fmt.Sprintf("%s.pb.gz", result.Side(i)))
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Write(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
		r, l, err := profile.LoadRaw(context.Background(), name, profile.Options{})
		if err != nil || r == nil {
			b.Fatalf("LoadRaw %s: %v, %v", name, l, err)
		}
		rs[i] = r
	}
	return rs
}

// BenchmarkStream compares the two ways a pprof protobuf's bytes reach
// the Analyzer, on the synthetic pair: the pprof model (Raw.Load: pprof's
// decoder, Load's checks, then Add) and the streaming decoder (Prepare,
// then AddInput). Decompression is not included (see BenchmarkInflate).
func BenchmarkStream(b *testing.B) {
	for _, n := range []int{20_000, 200_000} {
		rs := benchRaw(b, n)
		b.Run(fmt.Sprintf("stacks=%d/path=model", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a := NewAnalyzer(Options{})
				for side, r := range rs {
					l, err := r.Load()
					if err != nil {
						b.Fatal(err)
					}
					if err := a.Add(result.Side(side), l); err != nil {
						b.Fatal(err)
					}
				}
				a.Diff()
			}
		})
		b.Run(fmt.Sprintf("stacks=%d/path=stream", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a := NewAnalyzer(Options{})
				for side, r := range rs {
					in, err := Prepare(r)
					if err != nil || !in.Streamed() {
						b.Fatalf("Prepare: %v (streamed %v)", err, err == nil && in.Streamed())
					}
					if err := a.AddInput(result.Side(side), in); err != nil {
						b.Fatal(err)
					}
				}
				a.Diff()
			}
		})
	}
}

// BenchmarkSerialWalk is the gate's shape: a serial walk (an OnSample
// consumer) over many small profiles of one program, each resolving the
// same functions anew: a synthetic pair of 4,000 stacks over 20,000
// functions, each side's profile prepared and added 20 times (each
// Prepare is a new profile to the walk). It holds the
// per-profile costs of resolving functions, which a walk of two large
// profiles (BenchmarkStream) hides.
func BenchmarkSerialWalk(b *testing.B) {
	rs := benchRawOf(b, 4000, 20_000)
	b.ReportAllocs()
	for b.Loop() {
		a := NewAnalyzer(Options{})
		a.OnSample(func(*Sample) {})
		for side, r := range rs {
			for range 20 {
				in, err := Prepare(r)
				if err != nil {
					b.Fatal(err)
				}
				if err := a.AddInput(result.Side(side), in); err != nil {
					b.Fatal(err)
				}
			}
		}
		if r := a.Diff(); len(r.Methods) == 0 {
			b.Fatal("no method rows")
		}
	}
}

// BenchmarkInflate decompresses the 200k-stack base profile (13.8 MB
// gzipped, 21.1 MB raw) with compress/gzip, with
// github.com/klauspost/compress/gzip, and with package profile/inflate,
// which profile.LoadRaw uses first (klauspost's reader takes what it
// refuses). The streaming readers write to io.Discard; inflate makes the
// whole output, as LoadRaw needs it.
func BenchmarkInflate(b *testing.B) {
	cfg := synth.DefaultConfig()
	var buf bytes.Buffer
	if err := synth.Generate(cfg).Write(&buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	for _, c := range []struct {
		name string
		open func([]byte) (io.Reader, error)
	}{
		{"compress/gzip", func(z []byte) (io.Reader, error) { return gzip.NewReader(bytes.NewReader(z)) }},
		{"klauspost", func(z []byte) (io.Reader, error) { return kgzip.NewReader(bytes.NewReader(z)) }},
		{"inflate", func(z []byte) (io.Reader, error) {
			out, err := inflate.Gunzip(z, 0)
			return bytes.NewReader(out), err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				zr, err := c.open(data)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, zr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDefaultRules is the cost of reading the built-in rule packs,
// which every diff, top and gate pays before it reads a profile:
// go test ./diff -run '^$' -bench DefaultRules -benchmem
func BenchmarkDefaultRules(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if rs := rules.Default(); len(rs.Rules) == 0 {
			b.Fatal("no rules")
		}
	}
}
