package jfr

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
)

// headerSize is the size of a chunk header: magic, version, chunk size,
// constant-pool and metadata offsets, start nanos, duration, start ticks,
// ticks per second, state, padding and flags.
const headerSize = 68

// maxDepth bounds how deeply structs nest inside one value, so that a
// metadata description whose struct holds itself cannot recurse forever.
const maxDepth = 32

// field is one field of a class as the metadata describes it.
type field struct {
	name     string
	typeID   int64
	pool     bool   // the value is a constant-pool key
	array    bool   // dimension 1: a count, then the elements
	timespan string // the jdk.jfr.Timespan unit, if any ("TICKS", "NANOSECONDS", ...)
	stamp    string // the jdk.jfr.Timestamp unit, if any
}

// class is a type from the metadata: an event, a pool type, a struct or a
// primitive (no fields).
type class struct {
	id     int64
	name   string
	super  string
	fields []field
}

// valueKind says which member of a value holds it.
type valueKind uint8

const (
	vNone valueKind = iota
	vInt
	vFloat
	vString
	vRef    // a constant-pool key: i is the key, typ the pool's class
	vStruct // fields, in the class's order
	vArray  // elems
)

// value is one decoded field, struct, array or pool reference.
type value struct {
	kind   valueKind
	i      int64
	f      float64
	s      string
	typ    *class
	fields []value
}

// chunk is one decoded chunk: its header, classes and constant pools, and
// where its events lie.
type chunk struct {
	d             *decoder
	startNanos    int64
	startTicks    int64
	ticksPerSec   int64
	classes       map[int64]*class
	byName        map[string]*class
	pools         map[int64]map[int64]value
	events        []eventRef
	earlier       constants // see parseChunkAfter
	stringClassID int64
	stacks        map[[2]int64]resolvedStack // by reference (type, id); see stack
	methods       map[[2]int64]methodInfo    // by reference; see method
}

type eventRef struct {
	typ *class
	pos int // the first field's offset in the chunk
	end int
}

// parseChunk decodes the chunk at data[0:] (off is its place in the file)
// and returns it with its size.
func parseChunk(data []byte, off int) (*chunk, int, error) {
	return parseChunkAfter(data, off, constants{})
}

// parseChunkAfter is parseChunk for the chunk after prev (nil for the
// first): an event may refer to a constant (a stack trace, say) that the
// JVM wrote in an earlier chunk of the same recording, as the JDK's reader
// allows, so keys the chunk lacks are looked up in earlier, the constants
// of the chunks before it, by the class's name. parseChunkAfter adds the
// chunk's own constants to earlier.
func parseChunkAfter(data []byte, off int, earlier constants) (*chunk, int, error) {
	if len(data) < headerSize {
		return nil, 0, fmt.Errorf("chunk at byte %d: truncated header (%d of %d bytes)", off, len(data), headerSize)
	}
	if string(data[:4]) != "FLR\x00" {
		return nil, 0, fmt.Errorf("chunk at byte %d: no FLR magic", off)
	}
	major := binary.BigEndian.Uint16(data[4:])
	if major != 1 && major != 2 {
		return nil, 0, fmt.Errorf("chunk at byte %d: unsupported JFR version %d.%d", off, major, binary.BigEndian.Uint16(data[6:]))
	}
	size := binary.BigEndian.Uint64(data[8:])
	cpOff := binary.BigEndian.Uint64(data[16:])
	metaOff := binary.BigEndian.Uint64(data[24:])
	if size < headerSize || size > uint64(len(data)) {
		return nil, 0, fmt.Errorf("chunk at byte %d: size %d but %d bytes left in the file (truncated, or still being written)", off, size, len(data))
	}
	if metaOff < headerSize || metaOff >= size || cpOff >= size {
		return nil, 0, fmt.Errorf("chunk at byte %d: metadata offset %d or constant-pool offset %d outside the chunk of %d bytes (an unfinished recording?)", off, metaOff, cpOff, size)
	}
	c := &chunk{
		d:           &decoder{b: data[:size], compressed: data[67]&1 != 0, base: off},
		startNanos:  int64(binary.BigEndian.Uint64(data[32:])),
		startTicks:  int64(binary.BigEndian.Uint64(data[48:])),
		ticksPerSec: int64(binary.BigEndian.Uint64(data[56:])),
		pools:       map[int64]map[int64]value{},
	}
	if c.ticksPerSec <= 0 {
		return nil, 0, fmt.Errorf("chunk at byte %d: %d ticks per second", off, c.ticksPerSec)
	}
	if err := c.readMetadata(int(metaOff)); err != nil {
		return nil, 0, err
	}
	if err := c.scan(); err != nil {
		return nil, 0, err
	}
	c.earlier = earlier
	earlier.add(c)
	return c, int(size), nil
}

// constants holds the constants of the chunks read so far, by class name
// and key, for the references a later chunk of the same recording makes to
// them.
type constants map[string]map[int64]value

// add merges c's pools into k, later chunks' values replacing earlier ones.
func (k constants) add(c *chunk) {
	for id, pool := range c.pools {
		name := c.classes[id].name
		m := k[name]
		if m == nil {
			m = map[int64]value{}
			k[name] = m
		}
		for key, v := range pool {
			m[key] = v
		}
	}
}

// scan walks every record of the chunk, decodes the checkpoints' constant
// pools and remembers where the other events are.
func (c *chunk) scan() error {
	d := c.d
	d.pos = headerSize
	for d.pos < len(d.b) {
		start := d.pos
		size := d.long(4)
		typeID := d.long(8)
		if d.err != nil {
			return d.err
		}
		if size <= 0 || size > int64(len(d.b)-start) {
			d.pos = start
			d.fail("event size %d outside the chunk", size)
			return d.err
		}
		end := start + int(size)
		switch typeID {
		case 0: // metadata, read already
		case 1:
			if err := c.readCheckpoint(end); err != nil {
				return err
			}
		default:
			t := c.classes[typeID]
			if t == nil {
				d.pos = start
				d.fail("event of type %d, which the metadata does not describe", typeID)
				return d.err
			}
			c.events = append(c.events, eventRef{typ: t, pos: d.pos, end: end})
		}
		d.pos = end
	}
	return nil
}

// readCheckpoint decodes one checkpoint event's pools into c.pools.
func (c *chunk) readCheckpoint(end int) error {
	d := c.d
	d.long(8) // start time
	d.long(8) // duration
	d.long(8) // delta to the previous checkpoint
	d.long(4) // checkpoint type
	n := d.length()
	for i := 0; i < n && d.err == nil; i++ {
		id := d.long(8)
		t := c.classes[id]
		if t == nil && d.err == nil {
			d.fail("constant pool of type %d, which the metadata does not describe", id)
			break
		}
		entries := d.length()
		pool := c.pools[id]
		if pool == nil {
			pool = map[int64]value{}
			c.pools[id] = pool
		}
		for j := 0; j < entries && d.err == nil; j++ {
			key := d.long(8)
			pool[key] = c.readValue(t, 0)
		}
	}
	if d.err == nil && d.pos > end {
		d.fail("checkpoint runs past its size")
	}
	return d.err
}

// readValue decodes one value of class t, by the metadata's description.
func (c *chunk) readValue(t *class, depth int) value {
	d := c.d
	switch t.name {
	case "boolean", "byte":
		return value{kind: vInt, i: int64(d.byte1())}
	case "char", "short":
		return value{kind: vInt, i: d.long(2)}
	case "int":
		return value{kind: vInt, i: int64(int32(d.long(4)))}
	case "long":
		return value{kind: vInt, i: d.long(8)}
	case "float":
		return value{kind: vFloat, f: d.float(4)}
	case "double":
		return value{kind: vFloat, f: d.float(8)}
	case "java.lang.String":
		s, ref, isRef := d.str()
		if isRef {
			return value{kind: vRef, i: ref, typ: t}
		}
		return value{kind: vString, s: s}
	}
	if len(t.fields) == 0 {
		// Every value takes at least a byte, which bounds the work by the
		// input; a struct of no fields would take none.
		d.fail("a value of type %s, which is neither a primitive nor has fields", t.name)
		return value{}
	}
	if depth >= maxDepth {
		d.fail("values of type %s nest more than %d deep", t.name, maxDepth)
		return value{}
	}
	v := value{kind: vStruct, typ: t, fields: make([]value, len(t.fields))}
	for i, f := range t.fields {
		v.fields[i] = c.readField(f, depth+1)
		if d.err != nil {
			break
		}
	}
	return v
}

func (c *chunk) readField(f field, depth int) value {
	ft := c.classes[f.typeID]
	if ft == nil {
		c.d.fail("field %s has type %d, which the metadata does not describe", f.name, f.typeID)
		return value{}
	}
	one := func() value {
		if f.pool {
			return value{kind: vRef, i: c.d.long(8), typ: ft}
		}
		return c.readValue(ft, depth)
	}
	if !f.array {
		return one()
	}
	n := c.d.length()
	v := value{kind: vArray, fields: make([]value, 0, min(n, 1024))}
	for i := 0; i < n && c.d.err == nil; i++ {
		v.fields = append(v.fields, one())
	}
	return v
}

// resolve follows a pool reference; others come back as they are. A
// missing key is a null value.
func (c *chunk) resolve(v value) value {
	for i := 0; i < 4 && v.kind == vRef; i++ {
		r, ok := c.pools[v.typ.id][v.i]
		if !ok {
			r = c.earlier[v.typ.name][v.i]
		}
		v = r
	}
	return v
}

// get returns the named field of a struct (following references), or a
// null value.
func (c *chunk) get(v value, name string) value {
	return c.resolve(c.field(v, name))
}

// str returns a value as a string: a string, a Symbol's string, or "".
func (c *chunk) str(v value) string {
	v = c.resolve(v)
	switch v.kind {
	case vString:
		return v.s
	case vStruct:
		if len(v.fields) == 1 {
			return c.str(v.fields[0])
		}
	case vInt:
		return strconv.FormatInt(v.i, 10)
	}
	return ""
}

// nanos converts ticks to nanoseconds without overflowing on the way.
func (c *chunk) nanos(ticks int64) int64 {
	if c.ticksPerSec == 1e9 {
		return ticks
	}
	neg := ticks < 0
	u := uint64(ticks)
	if neg {
		u = uint64(-ticks)
	}
	hi, lo := bits.Mul64(u, 1e9)
	if hi >= uint64(c.ticksPerSec) {
		return 0
	}
	q, _ := bits.Div64(hi, lo, uint64(c.ticksPerSec))
	if neg {
		return -int64(q)
	}
	return int64(q)
}

// spanNanos converts a Timespan value in the field's unit to nanoseconds.
func (c *chunk) spanNanos(f field, v int64) int64 {
	switch f.timespan {
	case "NANOSECONDS":
		return v
	case "MICROSECONDS":
		return v * 1e3
	case "MILLISECONDS":
		return v * 1e6
	case "SECONDS":
		return v * 1e9
	}
	return c.nanos(v)
}
