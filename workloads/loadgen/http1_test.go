package loadgen

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// parse feeds in to a parser in pieces of step bytes, as reads would
// deliver them, and returns the first response, the bytes it took, and
// whether it ended at EOF.
func parse(in string, step int) (status int, keep bool, consumed int, err error) {
	var p parser
	var pending []byte
	pos := 0
	for {
		used, done, err := p.feed(pending)
		consumed += used
		pending = pending[used:]
		if err != nil {
			return 0, false, consumed, err
		}
		if done {
			return p.status, p.keep, consumed, nil
		}
		if pos == len(in) {
			done, err := p.eof(len(pending))
			if err != nil {
				return 0, false, consumed, err
			}
			if done {
				return p.status, false, consumed, nil
			}
		}
		k := min(step, len(in)-pos)
		pending = append(pending, in[pos:pos+k]...)
		pos += k
	}
}

func TestParser(t *testing.T) {
	const next = "HTTP/1.1 204 No Content\r\n\r\n" // must follow each response untouched
	cases := []struct {
		name   string
		raw    string
		status int
		keep   bool
		err    string // substring; "" = no error
		noNext bool   // the body runs to EOF, nothing follows
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{\"message\":\"Hello, World!\"}", 200, true, "", false},
		{"lower-case names, no reason", "HTTP/1.1 200\r\ncontent-length: 2\r\nserver: x\r\n\r\nok", 200, true, "", false},
		{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 200, true, "", false},
		{"chunked with extension and trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n", 200, true, "", false},
		{"connection close", "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbusy", 503, false, "", false},
		{"http/1.0 default close", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, false, "", false},
		{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", 200, true, "", false},
		{"100 continue first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", 201, true, "", false},
		{"304 has no body", "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", 304, true, "", false},
		{"close-delimited body", "HTTP/1.1 200 OK\r\n\r\nbody until the end", 200, false, "", true},
		{"other transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxxxx", 200, false, "", true},
		{"bad status line", "HTTP/2 200\r\n\r\n", 0, false, "malformed HTTP response: bad status line", true},
		{"not http", "SSH-2.0-OpenSSH_9\r\n", 0, false, "malformed", true},
		{"bad status code", "HTTP/1.1 2x0 OK\r\n\r\n", 0, false, "bad status code", true},
		{"bad content-length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 200, false, "bad Content-Length", true},
		{"conflicting content-length", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nok", 200, false, "bad Content-Length", true},
		{"truncated body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 200, false, io.ErrUnexpectedEOF.Error(), true},
		{"truncated headers", "HTTP/1.1 200 OK\r\nContent-Len", 200, false, io.ErrUnexpectedEOF.Error(), true},
		{"truncated chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", 200, false, io.ErrUnexpectedEOF.Error(), true},
		{"empty content", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, true, "", false},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 200, false, "bad chunk size", true},
		{"chunk without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n0\r\n\r\n", 200, false, "chunk not followed by CRLF", true},
		{"header too long", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLine) + "\r\n\r\n", 200, false, "line longer than", true},
		{"101 upgrade", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", 101, false, "unexpected 101", true},
	}
	for _, c := range cases {
		for _, step := range []int{1, 7, 1 << 20} {
			t.Run(fmt.Sprintf("%s/step %d", c.name, step), func(t *testing.T) {
				in := c.raw + next
				if c.noNext {
					in = c.raw
				}
				status, keep, consumed, err := parse(in, step)
				if c.err != "" {
					if err == nil || !strings.Contains(err.Error(), c.err) {
						t.Fatalf("err = %v, want %q", err, c.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if status != c.status || keep != c.keep {
					t.Errorf("got %d keep-alive %v, want %d %v", status, keep, c.status, c.keep)
				}
				if consumed != len(c.raw) {
					t.Errorf("consumed %d bytes, the response has %d", consumed, len(c.raw))
				}
				if c.noNext {
					return
				}
				status, keep, consumed, err = parse(in[consumed:], step)
				if err != nil || status != 204 || !keep || consumed != len(next) {
					t.Errorf("the next response: %d %v %d %v", status, keep, consumed, err)
				}
			})
		}
	}
}

func TestParserEOF(t *testing.T) {
	var p parser
	if done, err := p.eof(0); done || err != io.EOF {
		t.Errorf("closed between responses: %v %v, want io.EOF (a read error)", done, err)
	}
	if _, _, _, err := parse("HTTP/1.1 200 OK", 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut status line: %v", err)
	}
}

func TestParserAllocs(t *testing.T) {
	raw := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nServer: x\r\nDate: Mon, 30 Nov 2026 00:00:00 GMT\r\nContent-Length: 27\r\n\r\n{\"message\":\"Hello, World!\"}")
	var p parser
	allocs := testing.AllocsPerRun(100, func() {
		if used, done, err := p.feed(raw); err != nil || !done || used != len(raw) || p.status != 200 {
			t.Fatal(used, done, err)
		}
	})
	if allocs != 0 {
		t.Errorf("the parser allocates %.1f times per response", allocs)
	}
}

func TestParseTarget(t *testing.T) {
	tg, err := parseTarget("http://127.0.0.1:8080/json?x=1", http.Header{"X-Test": {"a", "b"}, "Accept": {"*/*"}})
	if err != nil {
		t.Fatal(err)
	}
	if tg.addr != "127.0.0.1:8080" {
		t.Errorf("addr %q", tg.addr)
	}
	want := "GET /json?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\nConnection: keep-alive\r\nX-Test: a\r\nX-Test: b\r\n\r\n"
	if string(tg.request) != want {
		t.Errorf("request\n%q\nwant\n%q", tg.request, want)
	}
	tg, err = parseTarget("http://[::1]/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if tg.addr != "[::1]:80" || !strings.HasPrefix(string(tg.request), "GET / HTTP/1.1\r\nHost: [::1]\r\nAccept: "+DefaultAccept+"\r\n") {
		t.Errorf("defaults: %q %q", tg.addr, tg.request)
	}
	for _, c := range []struct {
		url  string
		h    http.Header
		want string
	}{
		{"", nil, "no URL"},
		{"https://127.0.0.1/", nil, "only http:// is supported, not https://"},
		{"ftp://127.0.0.1/", nil, "only http://"},
		{"127.0.0.1:80/json", nil, "bad URL"},
		{"http:///json", nil, "no host"},
		{"http://u:p@127.0.0.1/", nil, "user info"},
		{"http://127.0.0.1/%zz", nil, "bad URL"},
		{"http://127.0.0.1/", http.Header{"Bad Name": {"x"}}, "bad header name"},
		{"http://127.0.0.1/", http.Header{"X": {"a\r\nInjected: 1"}}, "contains CR, LF or NUL"},
	} {
		if _, err := parseTarget(c.url, c.h); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseTarget(%q): %v, want %q", c.url, err, c.want)
		}
	}
}
