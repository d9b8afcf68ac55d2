// Package jsonerr words encoding/json's errors for the JSON format
// readers: where the document is broken, or which field has the wrong
// type, wrapped in the reader's own sentinel.
package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Describe wraps err, an error of json.Unmarshal, in shape (the reader's
// sentinel, "malformed … profile"), saying at which byte the JSON is
// invalid or which field holds the wrong type of value.
func Describe(shape, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%w: invalid JSON at byte %d: %v", shape, se.Offset, err)
	case errors.As(err, &te):
		return fmt.Errorf("%w: %s at byte %d is a JSON %s, want %s", shape, te.Field, te.Offset, te.Value, te.Type)
	}
	return fmt.Errorf("%w: %v", shape, err)
}
