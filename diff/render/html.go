package render

import (
	"errors"
	"io"

	"github.com/profdiff/profdiff/diff/report"
)

// writeHTML writes the html format. Placeholder of the skeleton commit:
// the page is built on the html branch.
func writeHTML(w io.Writer, r *report.Report, o Options) error {
	return errors.New("html: not built yet")
}
