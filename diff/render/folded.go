package render

import (
	"errors"
	"io"

	"github.com/profdiff/profdiff/diff/report"
)

// writeFolded writes the folded and difffolded formats. Placeholder of
// the skeleton commit.
func writeFolded(w io.Writer, r *report.Report, f Format, o Options) error {
	return errors.New("folded: not built yet")
}
