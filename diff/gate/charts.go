package gate

import (
	"strings"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
)

// charts are the gate's dot plots (HTML): for each check, a dot per
// profile on each side (its share on that check: the observations the U
// test compares) and, as a dashed line, the share the merged new side may
// reach before the check's threshold is exceeded: the merged base share
// plus the threshold (+2pp) or times it (+25%). The line is on the dots'
// scale but is compared with the merged new share, not with single dots;
// the note says so, and that in u-test mode a check fails only when the
// test is also significant.
func (r *Report) charts() []report.Block {
	var blocks []report.Block
	for _, c := range r.Checks {
		base := report.Series{Name: "base"}
		for _, v := range c.BaseProfiles {
			base.Points = append(base.Points, report.Point{Label: "base", Y: v})
		}
		nw := report.Series{Name: "new"}
		for _, v := range c.NewProfiles {
			nw.Points = append(nw.Points, report.Point{Label: "new", Y: v})
		}
		limit := c.Threshold.Ceiling(c.Base)
		y, unit := "share of the profile's total", report.ShareUnit
		switch c.Measure {
		case MeasureRate:
			y, unit = "value per second", c.Unit
		case MeasurePerRun:
			y, unit = "value per run", c.Unit
		}
		blocks = append(blocks, &report.Chart{
			Title: c.Check + ": " + render.String(verdictCell(c.Verdict)), Kind: report.ChartDots,
			X: "side", Y: y, YUnit: unit,
			Series:    []report.Series{base, nw},
			Threshold: &limit, ThresholdLabel: "base " + render.String(c.value(c.Base)) + " " + c.Threshold.String() + " = " + render.String(c.value(limit)),
			Note: r.chartNote(c),
		})
	}
	return blocks
}

// chartNote says what a check's dots and line are.
func (r *Report) chartNote(c CheckResult) string {
	var b strings.Builder
	what := "share"
	if c.Measure != MeasureShare {
		what = "value"
	}
	b.WriteString("A dot per profile. Dashed: the most the merged new " + what + " (" + render.String(c.value(c.New)) + ") may reach")
	if r.Mode == ModeUTest {
		b.WriteString("; to fail, the U test of the dots must also be significant")
	}
	b.WriteString(".")
	return b.String()
}
