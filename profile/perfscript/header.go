package perfscript

// headerFields are the groups of an event header line: what headerRE's
// submatches 1-8 hold, "" for a group that did not take part. pid is the
// first number (the tid when no `/tid` follows it).
type headerFields struct {
	comm, pid, tid, cpu, time, period, event, fields string
}

// isSpace is regexp's \s: ASCII tab, newline, form feed, carriage return
// and space (not \v).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// matchHeader matches line as headerRE does, without a regexp:
//
//	^\s*(?:(.*?)\s+)??(-?\d+)(?:/(-?\d+))?\s+(?:\[(\d+)\]\s+)?
//	(?:(\d+(?:\.\d+)?):\s+)?(?:(\d+)\s+)?(\S+):(?:\s+(.*?))?\s*$
//
// The lazy comm makes the first token that starts a well-formed tail
// the pid/tid: the tail is tried at the start (no comm) and after each run
// of spaces in turn, and the first that matches wins, the comm being what
// precedes that run. In the tail only the time stamp has an alternative
// that can succeed when taking it fails (`1.0: -5 cycles:` reads as the
// event "1.0"); every other optional group fails both ways once it
// matches, so it is taken whenever it can be. TestMatchHeaderIsHeaderRE
// holds the two to the same groups.
func matchHeader(line string) (headerFields, bool) {
	start := 0
	for start < len(line) && isSpace(line[start]) {
		start++
	}
	for p := start; p < len(line); p++ {
		if p > start && !(isSpace(line[p-1]) && !isSpace(line[p])) {
			continue
		}
		if h, ok := matchTail(line, p); ok {
			if p > start {
				run := p - 1
				for run > start && isSpace(line[run-1]) {
					run--
				}
				h.comm = line[start:run]
			}
			return h, true
		}
	}
	return headerFields{}, false
}

// digits returns the end of the run of digits at i (i when none).
func digits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// spaces returns the end of the run of \s at i (i when none).
func spaces(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// signed returns the end of `-?\d+` at i, or -1.
func signed(s string, i int) int {
	j := i
	if j < len(s) && s[j] == '-' {
		j++
	}
	if k := digits(s, j); k > j {
		return k
	}
	return -1
}

// matchTail matches headerRE after its comm, from p: the pid/tid onwards.
func matchTail(s string, p int) (headerFields, bool) {
	var h headerFields
	i := signed(s, p)
	if i < 0 {
		return h, false
	}
	h.pid = s[p:i]
	if i < len(s) && s[i] == '/' {
		j := signed(s, i+1)
		if j < 0 {
			return h, false
		}
		h.tid, i = s[i+1:j], j
	}
	if j := spaces(s, i); j > i {
		i = j
	} else {
		return h, false
	}
	if i < len(s) && s[i] == '[' {
		if j := digits(s, i+1); j > i+1 && j < len(s) && s[j] == ']' {
			if k := spaces(s, j+1); k > j+1 {
				h.cpu, i = s[i+1:j], k
			}
		}
	}
	// The time stamp: taken when it matches, and if the rest then fails,
	// tried as the event.
	if j := digits(s, i); j > i {
		end := j
		if end+1 < len(s) && s[end] == '.' && isDigit(s[end+1]) {
			end = digits(s, end+1)
		}
		if end < len(s) && s[end] == ':' {
			if k := spaces(s, end+1); k > end+1 {
				t := h
				t.time = s[i:end]
				if matchEvent(s, k, &t) {
					return t, true
				}
			}
		}
	}
	return h, matchEvent(s, i, &h)
}

// matchEvent matches headerRE's `(?:(\d+)\s+)?(\S+):(?:\s+(.*?))?\s*$`
// at i: the optional period, then the event, the first token ending in
// `:`, then the fields, trimmed.
func matchEvent(s string, i int, h *headerFields) bool {
	if j := digits(s, i); j > i {
		if k := spaces(s, j); k > j {
			h.period, i = s[i:j], k
		}
	}
	j := i
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	// \S+ then `:` then a space or the end: the token must end in `:`.
	if j-i < 2 || s[j-1] != ':' {
		return false
	}
	h.event = s[i : j-1]
	k := spaces(s, j)
	e := len(s)
	for e > k && isSpace(s[e-1]) {
		e--
	}
	h.fields = s[k:e]
	return true
}

// isNumber reports whether s is `[0-9]+(\.[0-9]+)?` (numberRE).
func isNumber(s string) bool {
	i := digits(s, 0)
	if i == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		return j > i+1 && j == len(s)
	}
	return i == len(s)
}
