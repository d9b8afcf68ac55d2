package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// errProtocol marks a response the client could not parse. It is counted as
// a read error, as wrk does with its parser's failures.
var errProtocol = errors.New("malformed HTTP response")

func protocolf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errProtocol, fmt.Sprintf(format, a...))
}

// DefaultAccept is the Accept header TechEmpower's and crank's wrk runs send
// for the JSON test; Run sends it, plus Connection: keep-alive, unless
// Config.Header overrides them.
const DefaultAccept = "application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7"

// target is a validated Config.URL.
type target struct {
	addr    string // host:port to dial
	request []byte // the whole GET request, sent as is on every round trip
}

// parseTarget validates the URL and builds the request bytes once.
func parseTarget(raw string, extra http.Header) (*target, error) {
	if raw == "" {
		return nil, errors.New("no URL given")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %v", raw, err)
	}
	if u.Scheme != "http" {
		if u.Scheme == "" {
			return nil, fmt.Errorf("bad URL %q: want http://HOST:PORT/PATH", raw)
		}
		return nil, fmt.Errorf("bad URL %q: only http:// is supported, not %s://", raw, u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("bad URL %q: no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("bad URL %q: user info in the URL is not supported (use a header)", u.Redacted()) // never the password
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	t := &target{addr: joinHostPort(u.Hostname(), port)}

	h := http.Header{}
	h.Set("Host", u.Host)
	h.Set("Accept", DefaultAccept)
	h.Set("Connection", "keep-alive")
	for k, vs := range extra {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	// Host first, as clients usually send it; the rest sorted so the bytes on
	// the wire do not depend on map order.
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "Host") != (keys[j] == "Host") {
			return keys[i] == "Host"
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	b.WriteString("GET ")
	b.WriteString(u.RequestURI())
	b.WriteString(" HTTP/1.1\r\n")
	for _, k := range keys {
		if !validHeaderName(k) {
			return nil, fmt.Errorf("bad header name %q", k)
		}
		for _, v := range h[k] {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fmt.Errorf("bad value for header %s: contains CR, LF or NUL", k)
			}
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteString("\r\n")
		}
	}
	b.WriteString("\r\n")
	t.request = []byte(b.String())
	return t, nil
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

// maxLine is the longest status, header or chunk-size line accepted.
const maxLine = 8 << 10

// Parser states.
const (
	psStatus    = iota // expecting a status line
	psHeaders          // in the header block
	psBody             // Content-Length body: remain bytes left
	psChunkSize        // expecting a chunk-size line
	psChunkData        // in a chunk: remain bytes left
	psChunkCRLF        // expecting the CRLF after a chunk
	psTrailers         // after the last chunk, until an empty line
	psEOFBody          // body delimited by the connection's close
)

// parser reads HTTP/1.x responses incrementally from whatever bytes have
// arrived, and discards their bodies without buffering them. Bodies may be
// sized by Content-Length, chunked, or delimited by the close (then keep is
// false). Interim 1xx responses are skipped. It allocates nothing.
type parser struct {
	state   int
	status  int   // of the response being read or just read
	keep    bool  // the connection may carry another request
	cl      int64 // Content-Length, -1 when none
	chunked bool
	remain  int64
}

// feed parses b, the bytes received and not yet consumed, and returns how
// many it consumed. done reports that a whole final response was consumed
// (status and keep describe it); otherwise feed wants more bytes, after
// b[used:].
func (p *parser) feed(b []byte) (used int, done bool, err error) {
	for {
		switch p.state {
		case psBody, psChunkData:
			k := min(int64(len(b)-used), p.remain)
			used += int(k)
			p.remain -= k
			if p.remain > 0 {
				return used, false, nil
			}
			if p.state == psBody {
				p.state = psStatus
				return used, true, nil
			}
			p.state = psChunkCRLF
			continue
		case psEOFBody:
			return len(b), false, nil
		}
		i := bytes.IndexByte(b[used:], '\n')
		if i > maxLine || (i < 0 && len(b)-used > maxLine) {
			return used, false, protocolf("line longer than %d bytes", maxLine)
		}
		if i < 0 {
			return used, false, nil
		}
		line := b[used : used+i]
		used += i + 1
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if done, err := p.line(line); done || err != nil {
			return used, done, err
		}
	}
}

// line takes one line of the status, header, chunk-size, chunk-end or
// trailer part; done reports that it ended a whole final response.
func (p *parser) line(line []byte) (done bool, err error) {
	switch p.state {
	case psStatus:
		if err := p.statusLine(line); err != nil {
			return false, err
		}
		p.state = psHeaders
	case psHeaders:
		if len(line) > 0 {
			return false, p.header(line)
		}
		return p.endHeaders()
	case psChunkSize:
		size, ok := parseHex(line)
		if !ok {
			return false, protocolf("bad chunk size line %q", clip(line))
		}
		if size == 0 {
			p.state = psTrailers
		} else {
			p.state, p.remain = psChunkData, size
		}
	case psChunkCRLF:
		if len(line) != 0 {
			return false, protocolf("chunk not followed by CRLF")
		}
		p.state = psChunkSize
	case psTrailers:
		if len(line) == 0 {
			p.state = psStatus
			return true, nil
		}
	}
	return false, nil
}

// endHeaders picks how the body is read once the header block has ended.
func (p *parser) endHeaders() (done bool, err error) {
	switch {
	case p.status == 101:
		return false, protocolf("unexpected 101 Switching Protocols")
	case p.status < 200: // interim 1xx: the real response follows
		p.state = psStatus
	case p.status == 204 || p.status == 304:
		p.state = psStatus
		return true, nil
	case p.chunked:
		p.state = psChunkSize
	case p.cl >= 0:
		p.state, p.remain = psBody, p.cl
	default:
		p.state, p.keep = psEOFBody, false
	}
	return false, nil
}

// eof tells the parser the connection was closed with pending bytes still
// unconsumed: done when that ends a close-delimited body, io.EOF when the
// server closed between responses, io.ErrUnexpectedEOF within one.
func (p *parser) eof(pending int) (done bool, err error) {
	switch {
	case p.state == psEOFBody:
		p.state = psStatus
		return true, nil
	case p.state == psStatus && pending == 0:
		return false, io.EOF
	}
	return false, io.ErrUnexpectedEOF
}

func (p *parser) statusLine(line []byte) error {
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return protocolf("bad status line %q", clip(line))
	}
	status := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return protocolf("bad status code in %q", clip(line))
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 {
		return protocolf("bad status code in %q", clip(line))
	}
	p.status = status
	p.keep = line[7] != '0' // HTTP/1.1 defaults to keep-alive, 1.0 to close
	p.cl, p.chunked = -1, false
	return nil
}

func (p *parser) header(line []byte) error {
	switch line[0] | 0x20 {
	case 'c':
		if v, ok := headerValue(line, "content-length"); ok {
			n, ok := parseDecimal(v)
			if !ok || (p.cl >= 0 && n != p.cl) {
				return protocolf("bad Content-Length %q", clip(v))
			}
			p.cl = n
		} else if v, ok := headerValue(line, "connection"); ok {
			if containsTokenFold(v, "close") {
				p.keep = false
			} else if containsTokenFold(v, "keep-alive") {
				p.keep = true
			}
		}
	case 't':
		if v, ok := headerValue(line, "transfer-encoding"); ok {
			p.chunked = lastTokenIsChunked(v)
			if !p.chunked {
				// Any other coding: the body runs to the close.
				p.cl = -1
				p.keep = false
			}
		}
	}
	return nil
}

// headerValue returns the trimmed value of line if its name is name
// (lower case), compared case-insensitively.
func headerValue(line []byte, name string) ([]byte, bool) {
	if len(line) <= len(name) || line[len(name)] != ':' {
		return nil, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '-' {
			if line[i] != '-' {
				return nil, false
			}
		} else if line[i]|0x20 != name[i] {
			return nil, false
		}
	}
	v := line[len(name)+1:]
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v, true
}

func parseDecimal(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func parseHex(line []byte) (int64, bool) {
	if i := indexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	for len(line) > 0 && (line[len(line)-1] == ' ' || line[len(line)-1] == '\t') {
		line = line[:len(line)-1]
	}
	if len(line) == 0 || len(line) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range line {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int64(c-'0')
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			n = n<<4 | int64(c|0x20-'a'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

func indexByte(b []byte, c byte) int { return bytes.IndexByte(b, c) }

// containsTokenFold reports whether the comma-separated list v holds token
// (lower case), case-insensitively.
func containsTokenFold(v []byte, token string) bool {
	for len(v) > 0 {
		i := indexByte(v, ',')
		var t []byte
		if i < 0 {
			t, v = v, nil
		} else {
			t, v = v[:i], v[i+1:]
		}
		if equalFoldTrim(t, token) {
			return true
		}
	}
	return false
}

func lastTokenIsChunked(v []byte) bool {
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] == ',' {
			v = v[i+1:]
			break
		}
	}
	return equalFoldTrim(v, "chunked")
}

func equalFoldTrim(t []byte, lower string) bool {
	for len(t) > 0 && (t[0] == ' ' || t[0] == '\t') {
		t = t[1:]
	}
	for len(t) > 0 && (t[len(t)-1] == ' ' || t[len(t)-1] == '\t') {
		t = t[:len(t)-1]
	}
	if len(t) != len(lower) {
		return false
	}
	for i := range t {
		if t[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// clip shortens what goes into an error message.
func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
