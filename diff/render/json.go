package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/profdiff/profdiff/diff/render/sink"
	"github.com/profdiff/profdiff/diff/report"
)

// writeJSON writes v as a json.Encoder indenting by two spaces writes it.
// A value that implements report.Rows has its long array (a diff's or a
// top listing's method rows, the bulk of the document: 12,600 rows, 6.7
// MB, on the 200k-stack pair) encoded one row at a time into a buffered
// w, so the document is never held whole, nor held twice by the
// indenting.
func writeJSON(w io.Writer, v any) error {
	rv, ok := v.(report.Rows)
	if !ok {
		return encodeJSON(w, v, "")
	}
	shell, key, n, row := rv.JSONRows()
	if n == 0 {
		return encodeJSON(w, v, "")
	}
	var head bytes.Buffer
	if err := encodeJSON(&head, shell, ""); err != nil {
		return err
	}
	// The shell's array is [], at the top level: the only line that
	// starts with two spaces and the key (a string holding it would have
	// its newline escaped; deeper keys are indented further).
	name, err := json.Marshal(key)
	if err != nil {
		return err
	}
	rowsKey := []byte("\n  " + string(name) + ": []")
	doc := head.Bytes()
	at := bytes.Index(doc, rowsKey)
	if at < 0 || bytes.Index(doc[at+1:], rowsKey) >= 0 {
		return encodeJSON(w, v, "") // not the shape expected: encode it whole
	}
	at += len(rowsKey) - len("]")
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(doc[:at])
	var buf bytes.Buffer
	for i := range n {
		buf.Reset()
		if err := encodeJSON(&buf, row(i), "    "); err != nil {
			return err
		}
		bw.WriteString("\n    ")
		if _, err := bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); err != nil {
			return err // the writer failed or was stopped: no use encoding the rest
		}
		if i < n-1 {
			bw.WriteByte(',')
		}
	}
	bw.WriteString("\n  ")
	bw.Write(doc[at:])
	return bw.Flush()
}

// encodeJSON writes v on w as json.Encoder does with prefix and a
// two-space indent, with DEL, C1 and bidi controls in its strings as \u
// escapes (sink.JSON): the same document, names whole, safe to print.
func encodeJSON(w io.Writer, v any, prefix string) error {
	enc := json.NewEncoder(jsonWriter{w})
	enc.SetIndent(prefix, "  ")
	return enc.Encode(v)
}

// jsonWriter passes each of a json.Encoder's writes, one whole value,
// through sink.JSON.
type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(sink.JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
