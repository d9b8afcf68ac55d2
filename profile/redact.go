package profile

import (
	"errors"
	"net/url"
	"strings"
)

// RedactURL is how a source is named wherever it is shown or stored: a
// URL with a password in it has the password replaced by "xxxxx"
// (url.URL.Redacted: user:pw@host becomes user:xxxxx@host); anything else
// (a path, "-", a URL without a password)
// is returned as it is. A URL that does not parse has whatever follows
// the first ":" of its user information replaced just the same. Load and LoadRaw name their sources by it, in
// Loaded.Source, Raw.Source, warnings and errors, and fetch with the URL
// as given.
func RedactURL(source string) string {
	if !strings.Contains(source, "://") || !strings.Contains(source, "@") {
		return source
	}
	u, err := url.Parse(source)
	if err != nil {
		return redactText(source)
	}
	if u.User == nil {
		return source
	}
	if _, has := u.User.Password(); !has {
		return source
	}
	return u.Redacted()
}

// redactText is RedactURL for a URL url.Parse refuses: the user
// information is what lies between "://" and the last "@" before the
// path.
func redactText(s string) string {
	i := strings.Index(s, "://") + len("://")
	auth := s[i:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndex(auth, "@")
	colon := strings.Index(auth, ":")
	if at < 0 || colon < 0 || colon > at {
		return s
	}
	return s[:i+colon+1] + "xxxxx" + s[i+at:]
}

// ParseURL is url.Parse for a URL that messages name: shown is
// RedactURL(raw), and the error is url.Parse's cause alone, since
// url.Error's message repeats the URL, password and all.
func ParseURL(raw string) (u *url.URL, shown string, err error) {
	u, err = url.Parse(raw)
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return u, RedactURL(raw), err
}
