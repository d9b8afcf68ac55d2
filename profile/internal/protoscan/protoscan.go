// Package protoscan says where protobuf data stops being protobuf, for
// errors that name a place. It reads only the wire format's framing (tags,
// varints, lengths) of the top-level message and knows no schema: the
// readers that decode a format's messages (profile/pull for pprof, pdata
// for OTLP) report what a field means; this says where the bytes break
// when their decoder says only "unexpected EOF" or "too much data".
package protoscan

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Break says where the top level of data stops being protobuf: the field
// that runs past the end (cut: a file cut short) or whose tag or value
// cannot be read. It returns "" when every top-level field reads, and what
// is wrong lies inside one.
func Break(data []byte) (where string, cut bool) {
	for off := 0; off < len(data); {
		num, typ, n := protowire.ConsumeTag(data[off:])
		if n < 0 {
			return fmt.Sprintf("at byte %d: the tag of a top-level field: %v", off, protowire.ParseError(n)), false
		}
		m := protowire.ConsumeFieldValue(num, typ, data[off+n:])
		switch {
		case m < 0 && errors.Is(protowire.ParseError(m), io.ErrUnexpectedEOF):
			return fmt.Sprintf("top-level field %d at byte %d runs past the end of the file, at byte %d (a file cut short?)", num, off, len(data)), true
		case m < 0:
			return fmt.Sprintf("at byte %d: top-level field %d: %v", off, num, protowire.ParseError(m)), false
		}
		off += n + m
	}
	return "", false
}

// Explain words a decoder's error, libErr, with the place Break finds: the
// cut alone where data was cut short (the decoder's "unexpected EOF" or
// "too much data" adds nothing), the break with libErr after it where the
// framing breaks, libErr alone where the top level reads.
func Explain(data []byte, libErr string) string {
	switch where, cut := Break(data); {
	case cut:
		return where
	case where != "":
		return where + " (" + libErr + ")"
	}
	return libErr
}
