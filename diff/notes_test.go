package diff

import "testing"

func TestRatioNote(t *testing.T) {
	cases := []struct {
		base, new float64
		want      string
	}{
		{0, 0, ""},
		{0, 0.0456, "new"},
		{0.1280, 0, "gone"},
		{0.0027, 0.0486, "18x"},
		{0.0552, 0.1091, "doubled"},
		{0.10, 0.1751, "doubled"},
		{0.10, 0.174, ""},
		{0.10, 0.249, "doubled"},
		{0.10, 0.25, "3x"},
		{0.10, 0.05, "halved"},
		{0.10, 0.04, "1/3"},
		{0.0620, 0.0250, "halved"},
		{0.10, 0.11, ""},
		{0.10, 0.09, ""},
		{1, 1000, "1000x"},
		{1, 1001, ">1000x"},
		{1000, 1, "1/1000"},
		{691e6, 3.12e3, "<1/1000"},
	}
	for _, c := range cases {
		if got := ratioNote(c.base, c.new); got != c.want {
			t.Errorf("ratioNote(%v, %v) = %q, want %q", c.base, c.new, got, c.want)
		}
	}
}

func TestMeasureNoteSaysWhatItCompares(t *testing.T) {
	cases := []struct {
		n         Normalize
		base, new float64
		want      string
	}{
		{NormalizeRate, 0.0027, 0.0486, "18x rate"},
		{NormalizeShare, 0.10, 0.05, "halved share"},
		{NormalizeValue, 30, 10, "1/3 value"},
		{NormalizeRate, 0, 1, "new"},
		{NormalizeShare, 1, 0, "gone"},
		{NormalizeShare, 1, 1.05, ""},
	}
	for _, c := range cases {
		if got := measureNote(c.n, c.base, c.new); got != c.want {
			t.Errorf("measureNote(%s, %v, %v) = %q, want %q", c.n, c.base, c.new, got, c.want)
		}
	}
}

func TestAnnotateMoves(t *testing.T) {
	rows := []MethodRow{
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
		rows[i].Note = ratioNote(rows[i].Base, rows[i].New)
	}
	annotateMoves(rows)
	want := []string{"now in System.Net.Sockets", "was in native", "gone", "new", "now in managed code", "was in native"}
	for i, w := range want {
		if rows[i].Note != w {
			t.Errorf("row %d (%s): note %q, want %q", i, rows[i].Name, rows[i].Note, w)
		}
	}
}
