package pull_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/internal/readertest"
	"github.com/profdiff/profdiff/profile/pull"
	"github.com/profdiff/profdiff/profile/synth"
)

// FuzzStreamDecoder: on any bytes the streaming decoder either refuses
// (a DecodeError at an offset inside the data, or a refusal that sends
// the profile to the model path) or reads a profile that pprof's decoder
// and profile's checks read too, with the same top. Never a panic. Seeds:
// small synthetic profiles, one with labels and a profiler sample, one
// of stacks deep enough (12 frames and more) that the walk reads their
// ids itself (fuseIDs), and the runtime's own heap and goroutine
// profiles of this process (mappings, lines, the runtime's encoding).
func FuzzStreamDecoder(f *testing.F) {
	for i, stacks := range []int{3, 20, 6} {
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Functions, cfg.MinDepth, cfg.MaxDepth = stacks, 10, 2, 5
		if i == 2 {
			cfg.Functions, cfg.MinDepth, cfg.MaxDepth = 40, 12, 16
		}
		p := synth.Generate(cfg)
		if i == 1 {
			p = synth.Labelled(p)
		}
		var buf bytes.Buffer
		if err := p.WriteUncompressed(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte{0x0a, 0x02, 0x08, 0x01})
	for _, name := range []string{"heap", "goroutine"} {
		f.Add(readertest.RuntimeProfile(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The ids are checked by the check pass (Open's default) or left
		// to the walk (Options.IDsInWalk): half the inputs each.
		raw := &profile.Raw{Source: "fuzz.pb", Data: data, Options: profile.Options{KeepProfiler: true}}
		var d *pull.File
		var err error
		readertest.BoundedAlloc(t, "OpenUnguarded", len(data), func() {
			d, err = pull.OpenUnguarded(raw, pull.Options{IDsInWalk: len(data)%2 == 1})
		})
		var de *pull.DecodeError
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
		stream := diff.NewAnalyzer(diff.Options{Top: -1})
		e2 := stream.AddInput(result.Base, diff.StreamInput(d))
		if e2 == nil {
			e2 = stream.Wait()
		}
		if e2 != nil && !errors.Is(e2, pull.ErrModel) {
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
		model := diff.NewAnalyzer(diff.Options{Top: -1})
		if e1 := model.Add(result.Base, l); e1 != nil {
			t.Fatalf("Add: model %v, stream took it", e1)
		}
		jm, _ := json.Marshal(model.Top())
		js, _ := json.Marshal(stream.Top())
		if !bytes.Equal(jm, js) {
			t.Fatalf("top: the pull reader's differs from the model's:\nmodel:  %s\nstream: %s", jm, js)
		}
	})
}
