package main

import (
	"fmt"
	"io"

	"github.com/profdiff/profdiff/profile/synth"
)

// extra is the `profdiff top` or the gate measurement: the command and
// the decompression floor of its inputs.
type extra struct {
	stacks   int     // unique stacks per profile
	profiles int     // profiles per side (gate), 1 for top
	gzMB     float64 // gzipped input, MB (10^6 bytes), all files
	pd       *result
	floor    *floorSet
}

// runExtras measures and prints the top and gate tables that the options
// ask for.
func runExtras(o options, rep *report, stdout, stderr io.Writer) error {
	if o.topStacks > 0 {
		e, err := measureTop(o, stderr)
		if err != nil {
			return err
		}
		rep.top = e
		fmt.Fprintln(stdout)
		fmt.Fprintf(stdout, "## `profdiff top` on one profile of %d stacks (%.1f MB gzipped, %.1f MB decompressed), best of %d\n\n", e.stacks, e.gzMB, float64(e.floor.raw)/1e6, o.runs)
		printExtra(stdout, "`profdiff top PROFILE`", e)
	}
	if o.gateProfiles > 0 {
		e, err := measureGate(o, stderr)
		if err != nil {
			return err
		}
		rep.gate = e
		fmt.Fprintln(stdout)
		fmt.Fprintf(stdout, "## `profdiff gate`: %d vs %d profiles of about %d stacks (%.2f MB gzipped each, %.1f MB in all, %.1f MB decompressed), best of %d\n\n",
			e.profiles, e.profiles, e.stacks, e.gzMB/float64(2*e.profiles), e.gzMB, float64(e.floor.raw)/1e6, o.runs)
		printExtra(stdout, "`profdiff gate --base 'base-*.pb.gz' --new 'new-*.pb.gz'`", e)
	}
	return nil
}

// measureTop times `profdiff top` on the base profile of o.topStacks
// stacks, and its floor.
func measureTop(o options, stderr io.Writer) (*extra, error) {
	cfg := o.cfg
	cfg.Stacks = o.topStacks
	file, err := profileFile(o.dir, cfg, synth.Base, stderr)
	if err != nil {
		return nil, err
	}
	e := &extra{stacks: cfg.Stacks, profiles: 1, gzMB: fileMB(file)}
	c := command{name: o.profdiff, args: []string{"top", file}}
	if e.pd, e.floor, err = measureWithFloor(o, &c, []string{file}, stderr); err != nil {
		return nil, fmt.Errorf("profdiff top and the floor: %v", err)
	}
	return e, nil
}

// measureGate times `profdiff gate` over o.gateProfiles profiles per side
// (see gateSet), and the floor of all of them. The gate's exit status 1
// (a check failed) is its verdict, not a failure.
func measureGate(o options, stderr io.Writer) (*extra, error) {
	cfg := o.cfg
	cfg.Stacks = o.gateStacks
	g, err := gateSet(o.dir, cfg, o.gateProfiles, stderr)
	if err != nil {
		return nil, err
	}
	e := &extra{stacks: cfg.Stacks, profiles: o.gateProfiles, gzMB: float64(g.totalBytes) / 1e6}
	c := command{name: o.profdiff, args: []string{"gate", "--base", g.baseGlob(), "--new", g.newGlob()}, ok: []int{1}}
	if e.pd, e.floor, err = measureWithFloor(o, &c, append(append([]string{}, g.base...), g.nw...), stderr); err != nil {
		return nil, fmt.Errorf("profdiff gate and the floor: %v", err)
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
