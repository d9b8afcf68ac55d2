package diff

import (
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/units"
)

func TestMeasureNoteSaysWhatItCompares(t *testing.T) {
	cases := []struct {
		n         result.Normalize
		base, new float64
		want      string
	}{
		{result.NormalizeRate, 0.0027, 0.0486, "18x rate"},
		{result.NormalizeShare, 0.10, 0.05, "halved share"},
		{result.NormalizeValue, 30, 10, "1/3 value"},
		{result.NormalizeRate, 0, 1, "new"},
		{result.NormalizeShare, 1, 0, "gone"},
		{result.NormalizeShare, 1, 1.05, ""},
	}
	for _, c := range cases {
		if got := measureNote(c.n, c.base, c.new); got != c.want {
			t.Errorf("measureNote(%s, %v, %v) = %q, want %q", c.n, c.base, c.new, got, c.want)
		}
	}
}

func TestAnnotateMoves(t *testing.T) {
	rows := []result.MethodRow{
		{Name: "SystemNative_WaitForSocketEvents", Module: "libSystem.Native", Base: 0.153},
		{Name: "Interop+Sys.WaitForSocketEvents", Module: "System.Net.Sockets", New: 0.1551},
		// Same MatchKey "Wait", same module: not a move.
		{Name: "System.Threading.LowLevelLifoSemaphore.Wait", Module: "System.Private.CoreLib", Base: 0.05},
		{Name: "System.Threading.WaitSubsystem+ThreadWaitInfo.Wait", Module: "System.Private.CoreLib", New: 0.0456},
		// No module on either side: a C symbol that became a managed name moved.
		{Name: "SystemNative_Read", Base: 0.01},
		{Name: "Interop+Sys.Read", New: 0.01},
	}
	for i := range rows {
		rows[i].Note = units.RatioNote(rows[i].Base, rows[i].New)
	}
	annotateMoves(rows)
	want := []string{"now in System.Net.Sockets", "was in native", "gone", "new", "now in managed code", "was in native"}
	for i, w := range want {
		if rows[i].Note != w {
			t.Errorf("row %d (%s): note %q, want %q", i, rows[i].Name, rows[i].Note, w)
		}
	}
}
