package main

// --format html through the command, in a real browser (headless Chromium
// through diff/render/browser; skipped when Chromium is absent).

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/render/browser"
)

// htmlOf runs profdiff with args (which ask for --format html), writes
// its page into the test's temp folder and opens it, checking it loaded
// clean: no console errors or exceptions, no request but the page.
func htmlOf(t *testing.T, args ...string) *browser.Page {
	t.Helper()
	out, stderr, code := profdiff(t, "", args...)
	if code != 0 {
		t.Fatalf("profdiff %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	if !strings.HasPrefix(out, "<!DOCTYPE html>") {
		t.Fatalf("profdiff %s wrote no page: %.200s", strings.Join(args, " "), out)
	}
	path := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	p := browser.Open(t, path)
	check := func() {
		if errs := p.Errors(); len(errs) > 0 {
			t.Errorf("the page logged errors: %q", errs)
		}
		for _, u := range p.Requests() {
			if u != p.URL {
				t.Errorf("the page requested %s", u)
			}
		}
	}
	check()
	t.Cleanup(check)
	return p
}

// csvRow is the CSV record of section and name from profdiff's csv.
func csvRow(t *testing.T, section, name string, args ...string) map[string]string {
	t.Helper()
	out, stderr, code := profdiff(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		if r[0] == section && r[1] == name {
			row := map[string]string{}
			for i, c := range recs[0] {
				row[c] = r[i]
			}
			return row
		}
	}
	t.Fatalf("no %s row %s in the csv", section, name)
	return nil
}

func share(t *testing.T, s string) string {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return render.Pct(v)
}

// The seed diff's page: the lock frame is red and found by search with
// the method table's numbers, the removed socket frame is drawn as
// removed, the table is there.
func TestHTMLSeedDiff(t *testing.T) {
	const wa, se = "System.Threading.LowLevelLock.WaitAndAcquire", "SystemNative_WaitForSocketEvents"
	p := htmlOf(t, "diff", "--format", "html", net10, net11)
	row := csvRow(t, "method", wa, "diff", "--format", "csv", net10, net11)
	var status string
	p.Eval(`profdiff.search("WaitAndAcquire")`, &status)
	want := "base " + row["base_value"] + " (" + share(t, row["base"]) + ") → new " + row["new_value"] + " (" + share(t, row["new"]) + ")"
	if !strings.Contains(status, want) || !strings.Contains(status, "frames match") {
		t.Errorf("search status %q, want the method row's %q", status, want)
	}
	var frames []struct {
		Name, Color string
		Removed     bool
	}
	p.Eval(`profdiff.frames()`, &frames)
	found := map[string]string{}
	for _, f := range frames {
		if f.Removed {
			found[f.Name] = "removed"
		} else if _, ok := found[f.Name]; !ok {
			found[f.Name] = f.Color
		}
	}
	if found[wa] != render.Palettes[0].Grew {
		t.Errorf("%s is %q, want the grew end %s", wa, found[wa], render.Palettes[0].Grew)
	}
	if found[se] != "removed" {
		t.Errorf("%s is %q, want drawn as removed", se, found[se])
	}
	var rows int
	p.Eval(`[...document.querySelectorAll("table")].find(t => t.tHead.rows[0].cells[0].textContent === "Method").tBodies[0].rows.length`, &rows)
	if rows < 10 {
		t.Errorf("the method table has %d rows", rows)
	}
}

// writeGoroutineProfile writes a real goroutine profile of this process
// (captureGoroutines), taken while parked extra goroutines wait.
func writeGoroutineProfile(t *testing.T, path string, parked int) {
	t.Helper()
	defer browser.Park(t, parked)()
	captureGoroutines(t, path, false)
}

// A real Go profile: top and diff pages open clean and draw frames whose
// tooltips read as flameTip's ("NAME\n…").
func TestHTMLGoProfile(t *testing.T) {
	dir := t.TempDir()
	base, nw := filepath.Join(dir, "base.pb.gz"), filepath.Join(dir, "new.pb.gz")
	writeGoroutineProfile(t, base, 0)
	writeGoroutineProfile(t, nw, 30)
	for name, args := range map[string][]string{
		"top":  {"top", "--format", "html", base},
		"diff": {"diff", "--format", "html", base, nw},
	} {
		t.Run(name, func(t *testing.T) {
			p := htmlOf(t, args...)
			var names []string
			p.Eval(`profdiff.frames().map(f => f.name)`, &names)
			if len(names) < 3 {
				t.Fatalf("frames drawn: %q", names)
			}
			var tip string
			p.Eval(`profdiff.tooltip(profdiff.frames()[1].name)`, &tip)
			if !strings.HasPrefix(tip, names[1]+"\n") || !strings.Contains(tip, "%)") {
				t.Errorf("tooltip of %s: %q", names[1], tip)
			}
			if name == "diff" && !strings.Contains(tip, " → new ") {
				t.Errorf("diff tooltip %q has no base → new", tip)
			}
		})
	}
}
