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
		key, n := binary.Uvarint(data[i:])
		if n <= 0 {
			return nil, 0
		}
		field, wire := key>>3, key&7
		start := i
		i += n
		switch wire {
		case 0:
			_, m := binary.Uvarint(data[i:])
			if m <= 0 {
				return nil, 0
			}
			i += m
		case 1:
			i += 8
		case 5:
			i += 4
		case 2:
			l, m := binary.Uvarint(data[i:])
			if m <= 0 || uint64(len(data)-i-m) < l {
				return nil, 0
			}
			body := data[i+m : i+m+int(l)]
			i += m + int(l)
			if field == fieldMapping || field == fieldLocation || field == fieldFunction {
				pos[field]++
				if !hasField1(body) {
					fixed++
					nb := binary.AppendUvarint(nil, 1<<3|0)
					nb = binary.AppendUvarint(nb, pos[field])
					nb = append(nb, body...)
					out = binary.AppendUvarint(out, key)
					out = binary.AppendUvarint(out, uint64(len(nb)))
					out = append(out, nb...)
					continue
				}
			}
		default:
			return nil, 0
		}
		if i > len(data) {
			return nil, 0
		}
		out = append(out, data[start:i]...)
	}
	if fixed == 0 {
		return nil, 0
	}
	return out, fixed
}

// hasField1 reports whether a message body has a non-zero varint field 1.
func hasField1(body []byte) bool {
	for i := 0; i < len(body); {
		key, n := binary.Uvarint(body[i:])
		if n <= 0 {
			return false
		}
		i += n
		switch key & 7 {
		case 0:
			v, m := binary.Uvarint(body[i:])
			if m <= 0 {
				return false
			}
			if key>>3 == 1 && v != 0 {
				return true
			}
			i += m
		case 1:
			i += 8
		case 5:
			i += 4
		case 2:
			l, m := binary.Uvarint(body[i:])
			if m <= 0 || l > uint64(len(body)-i-m) {
				return false
			}
			i += m + int(l)
		default:
			return false
		}
	}
	return false
}
