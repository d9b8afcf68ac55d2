package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/profdiff/profdiff/profile/synth"
)

// extra is the `profdiff top` or the gate measurement: the command and
// the decompression floor of its inputs.
type extra struct {
	stacks   int     // unique stacks per profile
	profiles int     // profiles per side (gate), 1 for top
	gzMB     float64 // gzipped input, MB (10^6 bytes), all files
	cmd      command // the profdiff command measured
	shown    string  // the command as its table names it
	pd       *result
	floor    *floorSet
}

// runExtras measures and prints the top and gate tables that the options
// ask for.
func runExtras(o options, rep *report, stdout, stderr io.Writer) error {
	for _, m := range []struct {
		on   bool
		cmd  string
		into **extra
	}{
		{o.topStacks > 0, "top", &rep.top},
		{o.gateProfiles > 0, "gate", &rep.gate},
	} {
		if !m.on {
			continue
		}
		e, err := measureExtra(o, m.cmd, stderr)
		if err != nil {
			return err
		}
		*m.into = e
		fmt.Fprintln(stdout)
		fmt.Fprintf(stdout, "## %s, best of %d\n\n", e.heading(), o.runs)
		printExtra(stdout, e.shown, e)
	}
	return nil
}

// heading says what e measured and on what: the stacks, the sizes and,
// for the gate, the profiles.
func (e *extra) heading() string {
	raw := float64(e.floor.raw) / 1e6
	if e.cmd.args[0] == "top" {
		return fmt.Sprintf("`profdiff top` on one profile of %d stacks (%.1f MB gzipped, %.1f MB decompressed)", e.stacks, e.gzMB, raw)
	}
	return fmt.Sprintf("`profdiff gate`: %d vs %d profiles of about %d stacks (%.2f MB gzipped each, %.1f MB in all, %.1f MB decompressed)",
		e.profiles, e.profiles, e.stacks, e.gzMB/float64(2*e.profiles), e.gzMB, raw)
}

// measureExtra times cmd, "top" or "gate", and the floor of its inputs:
// `profdiff top` on the base profile of o.topStacks stacks, or `profdiff
// gate` over o.gateProfiles profiles per side (see gateSet), whose exit
// status 1 (a check failed) is its verdict, not a failure.
func measureExtra(o options, cmd string, stderr io.Writer) (*extra, error) {
	cfg := o.cfg
	e := &extra{cmd: command{name: o.profdiff}}
	var files []string
	if cmd == "top" {
		cfg.Stacks = o.topStacks
		file, err := profileFile(o.dir, cfg, synth.Base, stderr)
		if err != nil {
			return nil, err
		}
		files, e.profiles, e.gzMB = []string{file}, 1, fileMB(file)
		e.cmd.args, e.shown = []string{"top", file}, "`profdiff top PROFILE`"
	} else {
		cfg.Stacks = o.gateStacks
		g, err := gateSet(o.dir, cfg, o.gateProfiles, stderr)
		if err != nil {
			return nil, err
		}
		files, e.profiles, e.gzMB = slices.Concat(g.base, g.nw), o.gateProfiles, float64(g.totalBytes)/1e6
		e.cmd.args, e.cmd.ok, e.shown = []string{"gate", "--base", g.baseGlob(), "--new", g.newGlob()}, []int{1}, "`profdiff gate --base 'base-*.pb.gz' --new 'new-*.pb.gz'`"
	}
	e.stacks = cfg.Stacks
	var err error
	if e.pd, e.floor, err = measureWithFloor(o, &e.cmd, files, stderr); err != nil {
		return nil, fmt.Errorf("profdiff %s and the floor: %v", cmd, err)
	}
	return e, nil
}

// printExtra prints a command's row, its floor's rows and the ratios.
func printExtra(w io.Writer, name string, e *extra) {
	f := e.floor
	fmt.Fprintln(w, "| command | wall | user+sys | peak RSS |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	line := func(name string, r *result) {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", name, secs(r.wall), secs(r.cpu), mib(r.maxRSS))
	}
	line(name, e.pd)
	for i, inf := range inflaters {
		line("floor: gunzip, "+inflaterDesc(inf), f.seq[i])
	}
	if f.workers > 1 {
		line(fmt.Sprintf("floor: gunzip, %d at once, %s", f.workers, f.bestName()), f.par)
	}
	fmt.Fprintf(w, "| **profdiff / floor** (%s) | **%.1fx** | %.1fx | %s |\n", f.bestName(), ratio(e.pd.wall, f.floor().wall), ratio(e.pd.cpu, f.floor().cpu), rssRatio(e.pd, f.floor()))
	if f.workers < 2 {
		return
	}
	fmt.Fprintf(w, "| profdiff / parallel floor | %.1fx | %.1fx | %s |\n", ratio(e.pd.wall, f.par.wall), ratio(e.pd.cpu, f.par.cpu), rssRatio(e.pd, f.par))
}
