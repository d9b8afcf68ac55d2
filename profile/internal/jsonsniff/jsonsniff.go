// Package jsonsniff holds the first test every JSON format reader's Looks
// makes: does the data open a JSON object, and does it name the keys only
// that format has. It reads bytes, not JSON, so that a sniff costs no
// decoding and a file cut short still looks like its format (its reader
// then says where it ends).
package jsonsniff

import "bytes"

// Object returns data from its first byte that is not JSON white space,
// and whether that byte opens a JSON object. A byte-order mark is the
// caller's to drop (the loader does, before any reader sees the text).
func Object(data []byte) ([]byte, bool) {
	t := bytes.TrimLeft(data, " \t\r\n")
	return t, len(t) > 0 && t[0] == '{'
}

// ObjectWith reports whether data opens a JSON object and holds each of
// keys, written as they stand in the JSON with their quotes (`"meta"`),
// anywhere in it.
func ObjectWith(data []byte, keys ...string) bool {
	if _, ok := Object(data); !ok {
		return false
	}
	for _, k := range keys {
		if !bytes.Contains(data, []byte(k)) {
			return false
		}
	}
	return true
}
