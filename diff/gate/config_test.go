package gate

import (
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	data := `{
  "alpha": 0.01,
  "max": {"lock-contention": "2x", "wait": "+5pp", "gc": "+25%", "sync": "+10pp"},
  "max_method": {"sync\\.\\(\\*Mutex\\)\\.Lock": "+1pp", "^main\\.": "+50%"}
}`
	cfg, checks, err := ParseConfig("gate.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Alpha == nil || *cfg.Alpha != 0.01 {
		t.Errorf("alpha = %v", cfg.Alpha)
	}
	var s []string
	for _, c := range checks {
		s = append(s, c.String())
	}
	want := `wait=+5pp lock-contention=2x gc=+25% sync=+10pp ^main\.=+50% sync\.\(\*Mutex\)\.Lock=+1pp`
	if strings.Join(s, " ") != want {
		t.Errorf("checks = %s\nwant     %s", strings.Join(s, " "), want)
	}
	if !checks[5].Method.MatchString("sync.(*Mutex).Lock") {
		t.Error("method regexp does not match sync.(*Mutex).Lock")
	}
	if _, checks, err := ParseConfig("empty.json", []byte(`{}`)); err != nil || len(checks) != 0 {
		t.Errorf("empty config: %v, %v", checks, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for data, msg := range map[string]string{
		`{"max": {"lock": "+2pp"}}`:               `gate.json: "max": unknown bucket "lock"`,
		`{"max": {"gc": "25"}}`:                   `gate.json: "max": gc: threshold "25" has no unit`,
		`{"max": {"gc": "0.5x"}}`:                 `gate.json: "max": gc: threshold "0.5x" is a factor below 1`,
		`{"maxx": {}}`:                            `unknown field "maxx" (known fields: "alpha", "max", "max_method")`,
		`{"max_method": {"(": "+1pp"}}`:           `"max_method": method regexp "("`,
		`{"max_method": {"sync\.Mutex": "+1pp"}}`: "in JSON a regexp's backslash is written twice",
		"{\n\"max\": {\n\"gc\": +25%}}":           "gate.json: line 3: invalid character",
		`{"alpha": 5}`:                            `"alpha": alpha 5 is not between 0 and 1`,
		`{"max": {"gc": 25}}`:                     "line 1: json: cannot unmarshal number",
		`{} {}`:                                   "text after the JSON object",
		``:                                        "gate.json: EOF",
	} {
		if _, _, err := ParseConfig("gate.json", []byte(data)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseConfig(%s) = %v, want %q", data, err, msg)
		}
	}
}
