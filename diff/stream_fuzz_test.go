package diff

import (
	"bytes"
	"errors"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// decodeUnguarded is decodeRaw without its panic guard, so that the fuzzer
// sees a panic of the decoder.
func decodeUnguarded(src string, data []byte) (*pbProfile, error) {
	d := &pbProfile{src: src, data: data}
	if err := d.scan(); err != nil {
		return nil, err
	}
	if err := d.build(); err != nil {
		return nil, err
	}
	// The ids are checked by the check pass (Prepare's default) or left to
	// the walk (PrepareOptions.IDsInWalk): half the inputs each.
	if err := d.check(false, len(data)%2 == 1); err != nil {
		return nil, err
	}
	d.loaded = &profile.Loaded{Source: src, Format: profile.FormatPprof, Profile: d.header}
	d.loaded.Kind = d.kind()
	return d, nil
}

// FuzzStreamDecoder: on any bytes the streaming decoder either refuses
// (a DecodeError at an offset inside the data, or a refusal that sends
// the profile to the model path) or reads a profile that pprof's decoder
// and profile's checks read too, with the same top. Never a panic. Seeds:
// small synthetic profiles, one with labels and a profiler sample, one
// of stacks deep enough (12 frames and more) that the walk reads their
// ids itself (fuseIDs).
func FuzzStreamDecoder(f *testing.F) {
	for i, stacks := range []int{3, 20, 6} {
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Functions, cfg.MinDepth, cfg.MaxDepth = stacks, 10, 2, 5
		if i == 2 {
			cfg.Functions, cfg.MinDepth, cfg.MaxDepth = 40, 12, 16
		}
		p := synth.Generate(cfg)
		if i == 1 {
			p = labelled(p)
		}
		var buf bytes.Buffer
		if err := p.WriteUncompressed(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte{0x0a, 0x02, 0x08, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := decodeUnguarded("fuzz.pb", data)
		var de *DecodeError
		switch {
		case errors.As(err, &de):
			if de.Offset < 0 || de.Offset > len(data) {
				t.Fatalf("offset %d outside the %d bytes: %v", de.Offset, len(data), err)
			}
			return
		case err != nil:
			return // the model path reads it (and says what is wrong)
		}
		// The walk checks the location ids the check pass left to it (a
		// refusal there sends the profile to the model path too).
		stream := NewAnalyzer(Options{Top: -1})
		e2 := stream.AddInput(Base, &Input{l: d.loaded, d: d})
		if e2 == nil {
			e2 = stream.Wait()
		}
		if e2 != nil && !errors.Is(e2, errFallback) {
			t.Fatalf("the walk refused it with %v, not sending it to the model path", e2)
		}
		_, perr := pprofile.ParseUncompressed(data)
		switch {
		case e2 != nil:
			return // the model path reads it (and says what is wrong)
		case perr != nil:
			t.Fatalf("the decoder took what pprof refuses: %v", perr)
		}
		l, lerr := profile.Parse("fuzz.pb", data, 0)
		if lerr != nil || l.Format != profile.FormatPprof {
			return // a registry reader sniffed it first, or a model-path check
		}
		model := NewAnalyzer(Options{Top: -1})
		if e1 := model.Add(Base, l); e1 != nil {
			t.Fatalf("Add: model %v, stream took it", e1)
		}
		sameJSON(t, "top", model.Top(), stream.Top())
	})
}
