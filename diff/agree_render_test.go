package diff_test

import (
	"bytes"
	"regexp"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// TestSerialShardedRenderAgree renders the results of a serial walk and a
// sharded one (TestSerialShardedAgree's inputs: mixed kinds, mixed
// modules) in every output format of diff and top, pictures included,
// and holds the bytes equal: no number changes with --format or with how
// the walk was split.
func TestSerialShardedRenderAgree(t *testing.T) {
	cases := map[string]func(t *testing.T) ([2][]*profile.Raw, diff.Options){
		"kinds": func(t *testing.T) ([2][]*profile.Raw, diff.Options) {
			cpu, wall := diff.ContendedGoProfiles(t)
			user, err := rules.Parse("wall-only.rules", bytes.NewReader([]byte(
				"go\twait\tstrong,kind=wall\trecordContended\\.func\twall-clock only\n")))
			if err != nil {
				t.Fatal(err)
			}
			return sides(t, [2][]*pprofile.Profile{{cpu, wall}, {wall, cpu}}),
				diff.Options{Rules: rules.Default().WithUserRules(user), SampleIndex: "samples"}
		},
		"modules": func(t *testing.T) ([2][]*profile.Raw, diff.Options) {
			p := diff.RecordNativeWaits(t)
			bare := p.Copy()
			for _, l := range bare.Location {
				l.Mapping = nil
			}
			bare.Mapping = nil
			return sides(t, [2][]*pprofile.Profile{{p}, {bare, p}}), diff.Options{}
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			in, base := mk(t)
			for _, by := range []result.By{result.ByFrame, result.ByCaller} {
				opts := base
				opts.By, opts.CallTree, opts.TreeMin = by, true, render.TreeMin
				opts.Peek = regexp.MustCompile(`.`)
				serial := diff.WalkAll(t, in, opts, false)
				sharded := diff.WalkAll(t, in, opts, true)
				for _, f := range append(append([]render.Format(nil), render.Formats...), render.Pictures...) {
					a := write(t, present.DiffFor(serial.Diff(), f.Parts()), f)
					b := write(t, present.DiffFor(sharded.Diff(), f.Parts()), f)
					if !bytes.Equal(a, b) {
						t.Errorf("by %s, diff --format %s: serial and sharded walks differ (%d and %d bytes)", by, f, len(a), len(b))
					}
					if f == render.DiffFolded {
						continue // a diff's picture only
					}
					a = write(t, present.TopFor(serial.Top(), f.Parts()), f)
					b = write(t, present.TopFor(sharded.Top(), f.Parts()), f)
					if !bytes.Equal(a, b) {
						t.Errorf("by %s, top --format %s: serial and sharded walks differ (%d and %d bytes)", by, f, len(a), len(b))
					}
				}
				// The folded formats as the command asks for them: every
				// stack, unbuilt (Options.TreeStacks).
				opts.TreeMin, opts.TreeFrames, opts.TreeStacks = 0, true, true
				serial, sharded = diff.WalkAll(t, in, opts, false), diff.WalkAll(t, in, opts, true)
				for _, f := range []render.Format{render.Folded, render.DiffFolded} {
					a := write(t, present.DiffFor(serial.Diff(), f.Parts()), f)
					b := write(t, present.DiffFor(sharded.Diff(), f.Parts()), f)
					if !bytes.Equal(a, b) || bytes.HasPrefix(a, []byte("error: ")) {
						t.Errorf("by %s, diff --format %s of stacks: serial and sharded walks differ (%d and %d bytes) or fail: %.100s", by, f, len(a), len(b), a)
					}
				}
			}
		})
	}
}

// sides writes each side's profiles as pprof files and reads them back raw.
func sides(t *testing.T, ps [2][]*pprofile.Profile) [2][]*profile.Raw {
	dir := t.TempDir()
	var out [2][]*profile.Raw
	for s, side := range ps {
		for i, p := range side {
			out[s] = append(out[s], diff.RawFile(t, dir, string(rune('a'+2*s+i))+".pb", p, profile.Options{}))
		}
	}
	return out
}

// write lays r out in format f; a format the report has no form in
// gives its error's text, which both walks must give alike.
func write(t *testing.T, r *report.Report, f render.Format) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := render.Write(&buf, r, f, render.Options{}); err != nil {
		return []byte("error: " + err.Error())
	}
	if buf.Len() == 0 {
		t.Fatalf("--format %s wrote nothing", f)
	}
	return buf.Bytes()
}
