package render

import (
	"errors"
	"io"

	"github.com/profdiff/profdiff/diff/report"
)

// chartSVG writes chart c as an inline SVG element for the html format.
// Placeholder of the skeleton commit.
func chartSVG(w io.Writer, c *report.Chart) error { return errors.New("chart: not built yet") }
