package golden

import "testing"

func TestUnified(t *testing.T) {
	cases := []struct {
		name, a, b, want string
	}{
		{"equal", "x\n", "x\n", ""},
		{"changed line with context", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\nten\n",
			"--- a\n+++ b\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+ten\n"},
		{"insert into empty", "", "x\n", "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+x\n"},
		{"lost newline", "x\n", "x", "--- a\n+++ b\n@@ -1,1 +1,1 @@\n-x\n+x\n\\ No newline at end of file\n"},
	}
	for _, c := range cases {
		if got := Unified("a", "b", c.a, c.b); got != c.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}
