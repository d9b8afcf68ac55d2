package diff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
)

// closureBuild builds testdata/closures (with or without the inserted
// closure) as its own module, runs it and loads the CPU profile it writes.
func closureBuild(t *testing.T, goTool string, insert bool) *profile.Loaded {
	t.Helper()
	dir := t.TempDir()
	tmpl := template.Must(template.ParseFiles(filepath.Join("testdata", "closures", "main.go.tmpl")))
	f, err := os.Create(filepath.Join(dir, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := tmpl.Execute(f, struct{ Insert bool }{insert}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module closures\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "closures")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	prof := filepath.Join(dir, "cpu.pb.gz")
	if out, err := exec.Command(bin, prof).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	return loadFile(t, prof)
}

// Two builds of one program, the second with a closure inserted above
// the others: main.main.func1 (spinCompute's caller) becomes func2, func2
// (spinHash's) becomes func3, and the new func1 calls spinLog. The diff
// pairs each closure with its renumbered self by what it calls, and the
// inserted one is new; the same build on both sides pairs each with
// itself.
func TestRenumberedClosuresPair(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the two versions: ", err)
	}
	base, nw := closureBuild(t, goTool, false), closureBuild(t, goTool, true)
	r := diffOf(t, Options{Top: -1, Cum: true}, base, nw)
	rows := map[string]result.MethodRow{}
	for _, m := range r.Methods {
		if strings.HasPrefix(m.Name, "main.main.func") {
			rows[m.Name] = m
		}
	}
	want := map[string]string{"main.main.func2": "main.main.func1", "main.main.func3": "main.main.func2", "main.main.func1": ""}
	if len(rows) != len(want) {
		t.Fatalf("closure rows %v, want the three closures of the new build", rows)
	}
	for name, from := range want {
		m := rows[name]
		if m.RenumberedFrom != from {
			t.Errorf("%s renumbered from %q (note %q), want %q", name, m.RenumberedFrom, m.Note, from)
		}
		if from != "" && (m.BaseValue == 0 || m.NewValue == 0 || !strings.Contains(m.Note, "renumbered from "+from)) {
			t.Errorf("%s: %v → %v, note %q; want both sides and the renumbering noted", name, m.BaseValue, m.NewValue, m.Note)
		}
		if from == "" && (m.BaseValue != 0 || m.NewValue == 0) {
			t.Errorf("inserted %s: %v → %v, want new", name, m.BaseValue, m.NewValue)
		}
	}
	// spinCompute's closure did the same work in each build: the paired
	// row compares like with like (within sampling noise), where pairing
	// by name would compare it with spinLog's half of it. (spinLog runs
	// for about 100 ms, some ten samples: at a sixth of that, 3 expected,
	// a loaded machine's run left it none often enough to fail.)
	if m := rows["main.main.func2"]; m.NewValue < 0.6*m.BaseValue || m.NewValue > 1.6*m.BaseValue {
		t.Errorf("func2 (spinCompute) %v → %v ns, want about equal", m.BaseValue, m.NewValue)
	}
	same := diffOf(t, Options{Top: -1, Cum: true}, nw, nw)
	for _, m := range same.Methods {
		if m.RenumberedFrom != "" {
			t.Errorf("one build on both sides: %s renumbered from %s", m.Name, m.RenumberedFrom)
		}
	}
}
