package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/synth"
)

// pairFiles is a generated pair on disk and the base profile's shape.
type pairFiles struct {
	base, nw        string
	functions, locs int
}

// shape names the pair's functions and locations per function.
func (p *pairFiles) shape() string {
	return fmt.Sprintf("%d functions, %d locations (%.1f per function)", p.functions, p.locs, float64(p.locs)/float64(max(1, p.functions)))
}

// stem names the files generated for cfg (either side): the generator's
// version and every field of the Config, so that a -dir filled by another
// generator or shape is not reused by mistake.
func stem(cfg synth.Config) string {
	s := fmt.Sprintf("synth%d-seed%d-n%d-f%d-d%d-%d", synth.Version, cfg.Seed, cfg.Stacks, cfg.Functions, cfg.MinDepth, cfg.MaxDepth)
	if cfg.PCsPerFunction != 0 {
		s += fmt.Sprintf("-pcs%d", cfg.PCsPerFunction)
	}
	return s
}

// profileFile returns the path of one side of cfg's pair in dir,
// generating it unless a previous run left it there.
func profileFile(dir string, cfg synth.Config, side synth.Side, stderr io.Writer) (string, error) {
	path := filepath.Join(dir, stem(cfg)+[]string{"-base.pb.gz", "-new.pb.gz"}[side])
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	cfg.Side = side
	start := time.Now()
	tmp := path + ".tmp"
	if err := synth.WriteFile(tmp, cfg); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	fmt.Fprintf(stderr, "generated %s (%s) in %s\n", path, fileMiB(path), secs(time.Since(start)))
	freeMemory()
	return path, nil
}

// pair returns the base and new profiles for cfg in dir (see profileFile)
// and the base profile's shape.
func pair(dir string, cfg synth.Config, stderr io.Writer) (*pairFiles, error) {
	pr := &pairFiles{}
	var err error
	if pr.base, err = profileFile(dir, cfg, synth.Base, stderr); err != nil {
		return nil, err
	}
	if pr.nw, err = profileFile(dir, cfg, synth.New, stderr); err != nil {
		return nil, err
	}
	if pr.functions, pr.locs, err = profileShape(pr.base); err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "pair %d stacks: %s\n", cfg.Stacks, pr.shape())
	return pr, nil
}

// profileShape reads a profile's Function and Location counts.
func profileShape(name string) (functions, locs int, err error) {
	defer freeMemory()
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, 0, err
	}
	p, err := pprofile.ParseData(data)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v", name, err)
	}
	return len(p.Function), len(p.Location), nil
}

// freeMemory returns this process's garbage to the OS, so that the
// generator's heap does not compete with the commands being timed.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// gateFiles is a generated gate corpus: n profiles per side.
type gateFiles struct {
	dir        string
	base, nw   []string
	stacks     int   // unique stacks of the unvaried profile
	totalBytes int64 // gzipped size of all the files
}

// baseGlob and newGlob are the quoted-glob arguments profdiff gate takes.
func (g *gateFiles) baseGlob() string { return filepath.Join(g.dir, "base-*.pb.gz") }
func (g *gateFiles) newGlob() string  { return filepath.Join(g.dir, "new-*.pb.gz") }

// gateSet returns n base and n new profiles of cfg's program in a folder
// of dir, generating the ones a previous run did not leave there. Each
// side is generated once by synth; profile i of a side is that profile
// varied by its own seed (cfg.Seed, side, i), as runs of one service vary:
// every sample is kept with probability 0.95 and its value scaled by a
// factor drawn from 0.6-1.4. The files are about 1 MB each at the default
// 4,000 stacks over 20,000 functions.
func gateSet(dir string, cfg synth.Config, n int, stderr io.Writer) (*gateFiles, error) {
	g := &gateFiles{dir: filepath.Join(dir, fmt.Sprintf("gate%d-", n)+stem(cfg)), stacks: cfg.Stacks}
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		return nil, err
	}
	start := time.Now()
	// The two sides are generated at once: each holds its own profile.
	var names [2][]string
	var made [2]int
	var errs [2]error
	var wg sync.WaitGroup
	for _, side := range []synth.Side{synth.Base, synth.New} {
		wg.Go(func() { names[side], made[side], errs[side] = gateSide(g.dir, cfg, side, n) })
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	g.base, g.nw = names[0], names[1]
	for _, f := range append(append([]string{}, g.base...), g.nw...) {
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		g.totalBytes += st.Size()
	}
	if made[0]+made[1] > 0 {
		fmt.Fprintf(stderr, "generated %d gate profiles in %s (%s, %.2f MB per profile)\n", made[0]+made[1], g.dir, secs(time.Since(start)), g.meanMB())
	}
	return g, nil
}

// meanMB is the mean gzipped size of a gate profile in MB (10^6 bytes).
func (g *gateFiles) meanMB() float64 {
	return float64(g.totalBytes) / 1e6 / float64(max(1, len(g.base)+len(g.nw)))
}

// gateSide writes the missing profiles of one side of a gate corpus and
// returns all n names and how many it wrote.
func gateSide(dir string, cfg synth.Config, side synth.Side, n int) ([]string, int, error) {
	prefix := []string{"base", "new"}[side]
	names := make([]string, n)
	var missing []int
	for i := range n {
		names[i] = filepath.Join(dir, fmt.Sprintf("%s-%03d.pb.gz", prefix, i))
		if _, err := os.Stat(names[i]); err != nil {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return names, 0, nil
	}
	defer freeMemory()
	cfg.Side = side
	p := synth.Generate(cfg)
	all := p.Sample
	orig := make([][]int64, len(all))
	for j, s := range all {
		orig[j] = append([]int64(nil), s.Value...)
	}
	kept := make([]*pprofile.Sample, 0, len(all))
	for _, i := range missing {
		r := rand.New(rand.NewSource(cfg.Seed*1_000_003 + int64(side)*7919 + int64(i)))
		kept = kept[:0]
		for j, s := range all {
			if r.Float64() >= 0.95 {
				continue
			}
			f := 0.6 + 0.8*r.Float64()
			c := max(1, int64(math.Round(float64(orig[j][0])*f)))
			s.Value[0], s.Value[1] = c, c*synth.Period
			kept = append(kept, s)
		}
		p.Sample = kept
		if err := writeProfile(names[i], p); err != nil {
			return nil, 0, err
		}
	}
	return names, len(missing), nil
}

// writeProfile writes p gzipped to name, through a temporary file so that
// an interrupted run leaves no half-written profile to reuse.
func writeProfile(name string, p *pprofile.Profile) error {
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
