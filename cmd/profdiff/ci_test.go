package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/felixge/fgprof"
	junit "github.com/joshdk/go-junit"
	"go.yaml.in/yaml/v3"

	"github.com/profdiff/profdiff/profile/capture"
)

// ciReadme is the manual whose CI examples TestCIExamples runs.
const ciReadme = "diff/gate/README.md"

// ciUserSteps are the parts of the CI examples that are the user's own
// (their service, their runs): the test makes capture folders in their
// place. GitHub steps by name, GitLab script lines by a word they hold.
var ciUserSteps = []string{"Profile base and head", "ci/profile-runs.sh"}

// TestCIExamples runs the GitHub Actions workflow and the GitLab CI job of
// the gate's manual as those CIs would: each run: step (GitHub: bash -e,
// GITHUB_PATH read back into PATH after each step) or the script: lines
// (GitLab: one shell, stopping at the first failure), in a fresh
// workspace whose tools/profdiff is this checkout, with no profdiff on
// PATH until the install step builds it. Capture folders of a small Go
// program (8 goroutines, without and with a mutex on their hot path,
// recorded with fgprof) stand in for the profiling. The gate must fail
// (exit 1) and leave GitHub's summary (once, valid GitHub Markdown, under
// a comment's limit) and the JUnit file that GitLab's artifacts name.
func TestCIExamples(t *testing.T) {
	for _, tool := range []string{"go", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH: the CI examples build and run with it", tool)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	github, gitlab := ciExamples(t, filepath.Join(root, ciReadme))
	start := time.Now()
	prof := ciCaptureFolders(t)
	t.Logf("%.1fs: the capture folders", time.Since(start).Seconds())
	// PATH without any profdiff: the install step must provide it.
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "profdiff")); err != nil {
			path = append(path, d)
		}
	}

	t.Run("github", func(t *testing.T) {
		ws, runner := ciWorkspace(t, root), t.TempDir()
		if err := os.Symlink(prof, filepath.Join(runner, "prof")); err != nil {
			t.Fatal(err)
		}
		summary, ghPath := filepath.Join(runner, "step_summary.md"), filepath.Join(runner, "github_path")
		env := append(os.Environ(), "CI=true", "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE="+ws, "RUNNER_TEMP="+runner,
			"GITHUB_STEP_SUMMARY="+summary, "GITHUB_PATH="+ghPath)
		var ran []string
		gate := -1
		for _, step := range github {
			if step.Run == "" || slices.ContainsFunc(ciUserSteps, func(s string) bool { return strings.HasPrefix(step.Name, s) }) {
				continue
			}
			// GITHUB_PATH's lines go before PATH, the last written first.
			added, _ := os.ReadFile(ghPath)
			dirs := strings.Fields(string(added))
			slices.Reverse(dirs)
			dirs = append(dirs, path...)
			code, out := ciShell(t, ws, append(env, "PATH="+strings.Join(dirs, string(os.PathListSeparator))), step.Run)
			ran = append(ran, step.Name)
			switch {
			case strings.Contains(step.Run, "profdiff gate"):
				gate = code
			case code != 0:
				t.Fatalf("step %q: exit %d\n%s", step.Name, code, out)
			}
		}
		if gate != 1 {
			t.Fatalf("the gate step exited %d, want 1 (a regression); steps run: %q", gate, ran)
		}
		md, err := os.ReadFile(summary)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(md), "### profdiff gate: FAIL"); n != 1 || len(md) >= 65536 || !strings.HasPrefix(string(md), "**Verdict:** `lock-contention` failed") {
			t.Errorf("step summary: %d reports, %d bytes; want one failed lock-contention report under 65,536 bytes:\n%s", n, len(md), md)
		}
		checkGitHubMarkdown(t, string(md))
		ciCheckJUnit(t, filepath.Join(ws, "gate.xml"))
	})

	t.Run("gitlab", func(t *testing.T) {
		ws := ciWorkspace(t, root)
		if err := os.Symlink(prof, filepath.Join(ws, "prof")); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range gitlab.Script {
			if !slices.ContainsFunc(ciUserSteps, func(s string) bool { return strings.Contains(l, s) }) {
				lines = append(lines, l)
			}
		}
		env := append(os.Environ(), "CI=true", "GITLAB_CI=true", "CI_PROJECT_DIR="+ws, "GITHUB_STEP_SUMMARY=",
			"PATH="+strings.Join(path, string(os.PathListSeparator)))
		code, out := ciShell(t, ws, env, strings.Join(lines, "\n"))
		if code != 1 || !strings.Contains(out, "gate failed: lock-contention grew") {
			t.Fatalf("the GitLab job exited %d, want 1 (a regression):\n%s", code, out)
		}
		if gitlab.Artifacts.Reports.JUnit == "" || gitlab.Artifacts.When != "always" {
			t.Errorf("the job publishes no JUnit report whatever its status: artifacts %+v", gitlab.Artifacts)
		}
		ciCheckJUnit(t, filepath.Join(ws, gitlab.Artifacts.Reports.JUnit))
	})
}

// ghStep is a GitHub Actions step.
type ghStep struct {
	Name string `yaml:"name"`
	Uses string `yaml:"uses"`
	Run  string `yaml:"run"`
}

// glJob is a GitLab CI job.
type glJob struct {
	Script    []string `yaml:"script"`
	Artifacts struct {
		When    string `yaml:"when"`
		Reports struct {
			JUnit string `yaml:"junit"`
		} `yaml:"reports"`
	} `yaml:"artifacts"`
}

// ciExamples reads the yaml blocks of the manual: the GitHub workflow
// (the one with jobs:, its one job's steps) and the GitLab job (the one
// whose job has script:).
func ciExamples(t *testing.T, readme string) ([]ghStep, glJob) {
	text, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var steps []ghStep
	var job *glJob
	lines := strings.Split(string(text), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```yaml" {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
			j++
		}
		block := strings.Join(lines[i+1:j], "\n")
		i = j
		var gh struct {
			Jobs map[string]struct {
				Steps []ghStep `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal([]byte(block), &gh); err == nil && len(gh.Jobs) == 1 {
			for _, j := range gh.Jobs {
				steps = j.Steps
			}
			continue
		}
		var gl map[string]glJob
		if err := yaml.Unmarshal([]byte(block), &gl); err != nil {
			t.Fatalf("%s: a yaml block that is neither a workflow nor a job: %v", readme, err)
		}
		for _, j := range gl {
			if len(j.Script) > 0 {
				job = &j
			}
		}
	}
	if len(steps) == 0 || job == nil {
		t.Fatalf("%s: want a GitHub workflow with one job and a GitLab job (got %d steps, job %v)", readme, len(steps), job != nil)
	}
	return steps, *job
}

// ciWorkspace is a fresh checkout of the user's project: empty but for
// tools/profdiff, this repository.
func ciWorkspace(t *testing.T, root string) string {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(ws, "tools", "profdiff")); err != nil {
		t.Fatal(err)
	}
	return ws
}

// ciShell runs script with bash -e in dir, as both CIs run theirs, and
// returns its exit status and output.
func ciShell(t *testing.T, dir string, env []string, script string) (int, string) {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("%.1fs: %s", time.Since(start).Seconds(), strings.SplitN(strings.TrimSpace(script), "\n", 2)[0])
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// ciCheckJUnit reads the gate's JUnit file back with an independent
// parser: one suite, the default checks as its cases, lock-contention
// failed with its figures.
func ciCheckJUnit(t *testing.T, path string) {
	t.Helper()
	suites, err := junit.IngestFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) != 1 || len(suites[0].Tests) != 1 {
		t.Fatalf("%s: %d suites; want one with one case, lock-contention", path, len(suites))
	}
	tc := suites[0].Tests[0]
	if tc.Name != "lock-contention" || tc.Status != junit.StatusFailed || !strings.Contains(tc.Message, "lock-contention failed: ") ||
		!strings.Contains(tc.Message, "threshold +2pp") {
		t.Errorf("%s: case %q %s %q; want lock-contention failed, its figures in the message", path, tc.Name, tc.Status, tc.Message)
	}
}

// ciCaptureFolders writes base/run-{1..5} and head/run-{1..5}, capture
// folders of this test program's 8 workers recorded with fgprof (a
// wall-clock profile, wall.pb.gz), without (base) and with (head) a
// mutex on their hot path, interleaved; it returns their parent.
func ciCaptureFolders(t *testing.T) string {
	dir := t.TempDir()
	for i := 1; i <= 5; i++ {
		for _, side := range []string{"base", "head"} {
			ciCaptureRun(t, filepath.Join(dir, side, fmt.Sprintf("run-%d", i)), side == "head")
		}
	}
	return dir
}

// ciCaptureWindow is how long fgprof records a run: at its 99 Hz, about
// 20 snapshots of every goroutine.
const ciCaptureWindow = 200 * time.Millisecond

func ciCaptureRun(t *testing.T, dir string, contended bool) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stopWorkers := startGateWorkers(contended)
	var buf bytes.Buffer
	start := time.Now()
	end := fgprof.Start(&buf, fgprof.FormatPprof)
	time.Sleep(ciCaptureWindow) // the recording's window, as capture's --duration
	if err := end(); err != nil {
		t.Fatal(err)
	}
	stopWorkers()
	if err := os.WriteFile(filepath.Join(dir, "wall.pb.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &capture.Manifest{Format: capture.ManifestFormat, URL: "http://127.0.0.1:6060", Seconds: 1, Start: start, End: time.Now(),
		Files: []capture.File{{Kind: "wall", Path: "wall.pb.gz", Bytes: int64(buf.Len())}}, Complete: true}
	if err := capture.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
}
