package profile

import "encoding/binary"

// Field numbers of profile.proto's Profile message that hold messages with an
// `id` field (field 1): mapping = 3, location = 4, function = 5.
const (
	fieldMapping  = 3
	fieldLocation = 4
	fieldFunction = 5
)

// numberMissingIDs rewrites a serialized (uncompressed) profile so that every
// Mapping, Location and Function message without an id gets id = its 1-based
// position among the messages of its kind, which is what the writers that
// omit ids mean by their references. It returns the rewritten bytes and how
// many messages it numbered (0 and nil when the data is not a well-formed
// protobuf or nothing was missing).
func numberMissingIDs(data []byte) ([]byte, int) {
	out := make([]byte, 0, len(data)+1024)
	pos := map[uint64]uint64{}
	fixed := 0
	for i := 0; i < len(data); {
		key, _, body, next, ok := readField(data, i)
		if !ok {
			return nil, 0
		}
		if field := key >> 3; key&7 == 2 && (field == fieldMapping || field == fieldLocation || field == fieldFunction) {
			pos[field]++
			if !hasField1(body) {
				fixed++
				nb := binary.AppendUvarint(nil, 1<<3|0)
				nb = binary.AppendUvarint(nb, pos[field])
				nb = append(nb, body...)
				out = binary.AppendUvarint(out, key)
				out = binary.AppendUvarint(out, uint64(len(nb)))
				out = append(out, nb...)
				i = next
				continue
			}
		}
		out = append(out, data[i:next]...)
		i = next
	}
	if fixed == 0 {
		return nil, 0
	}
	return out, fixed
}

// hasField1 reports whether a message body has a non-zero varint field 1.
func hasField1(body []byte) bool {
	for i := 0; i < len(body); {
		key, v, _, next, ok := readField(body, i)
		if !ok {
			return false
		}
		if key == 1<<3|0 && v != 0 {
			return true
		}
		i = next
	}
	return false
}

// readField reads the protobuf field at data[i:]: its key, its value when
// it is a varint, its body when it is length-delimited, and where the next
// field starts. ok is false when the field is malformed or truncated.
func readField(data []byte, i int) (key, v uint64, body []byte, next int, ok bool) {
	key, n := binary.Uvarint(data[i:])
	if n <= 0 {
		return 0, 0, nil, 0, false
	}
	i += n
	switch key & 7 {
	case 0:
		v, n = binary.Uvarint(data[i:])
		if n <= 0 {
			return 0, 0, nil, 0, false
		}
		i += n
	case 1:
		i += 8
	case 5:
		i += 4
	case 2:
		l, m := binary.Uvarint(data[i:])
		if m <= 0 || l > uint64(len(data)-i-m) {
			return 0, 0, nil, 0, false
		}
		body = data[i+m : i+m+int(l)]
		i += m + int(l)
	default:
		return 0, 0, nil, 0, false
	}
	if i > len(data) {
		return 0, 0, nil, 0, false
	}
	return key, v, body, i, true
}
