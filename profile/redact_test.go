package profile

import "testing"

func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://user:pw@127.0.0.1:6060/debug/pprof/profile?seconds=5", "http://user:xxxxx@127.0.0.1:6060/debug/pprof/profile?seconds=5"},
		{"https://u:p%40ss@host/x", "https://u:xxxxx@host/x"},
		{"http://token@host/x", "http://token@host/x"}, // no password: as net/url's Redacted
		{"http://host/a@b", "http://host/a@b"},
		{"http://u:pw@host/%zz", "http://u:xxxxx@host/%zz"},          // does not parse: redacted by text
		{"http://u:p@w@host/%zz?a=@", "http://u:xxxxx@host/%zz?a=@"}, // the last @ before the path ends the user information
		{"cpu.pb.gz", "cpu.pb.gz"},
		{"dir/a:b@c", "dir/a:b@c"},
		{"-", "-"},
	} {
		if got := RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
