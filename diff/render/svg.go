package render

import (
	"errors"
	"io"

	"github.com/profdiff/profdiff/diff/report"
)

// writeSVG writes the svg format. Placeholder of the skeleton commit.
func writeSVG(w io.Writer, r *report.Report) error {
	return errors.New("svg: not built yet")
}
