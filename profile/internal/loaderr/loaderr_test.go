package loaderr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A server's answer is quoted on one line, at most n bytes and a "…",
// cut between characters, from a bounded prefix of the answer.
func TestBody(t *testing.T) {
	b := "<h1>\x1b]52;c;ZXZpbA==\x07 oops</h1>\r\n\r\nsecond line " + strings.Repeat("é", 1<<20)
	got := Body(b, 301)
	if strings.ContainsAny(got, "\n\r") || len(got) > 301+len("…") || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("Body = %d bytes %q", len(got), got)
	}
	if !strings.HasPrefix(got, "<h1>\x1b]52;c;ZXZpbA==\x07 oops</h1> second line é") {
		t.Errorf("Body = %q", got[:60])
	}
	if got := Body(" short\nanswer ", 300); got != "short answer" {
		t.Errorf("Body of a short answer = %q", got)
	}
}
