// Package redirect bounds the redirects an HTTP client follows: package
// profile (URL sources) and package profile/capture (captures) use it, so
// both refuse the same way.
package redirect

import (
	"fmt"
	"net/http"
	"net/url"
)

// Max is how many redirects one request follows.
const Max = 3

// Bound returns a copy of client that follows at most Max redirects, each
// to an address check passes (nil: any), and then what client itself
// allows. The copy shares client's transport; client is not changed.
func Bound(client *http.Client, check func(*url.URL) error) *http.Client {
	c := *client
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > Max {
			return fmt.Errorf("more than %d redirects (the last to %s)", Max, req.URL.Redacted())
		}
		if check != nil {
			if err := check(req.URL); err != nil {
				return fmt.Errorf("redirected to %s: %w", req.URL.Redacted(), err)
			}
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &c
}
