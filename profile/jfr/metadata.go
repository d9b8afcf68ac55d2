package jfr

import (
	"strconv"
)

// element is one node of the metadata event's element tree.
type element struct {
	name     string
	attrs    []string // key, value, key, value, ...: a slice, not a map, as elements are many and small
	children []*element
}

// attr returns the value of the attribute key, or "".
func (e *element) attr(key string) string {
	for i := 0; i+1 < len(e.attrs); i += 2 {
		if e.attrs[i] == key {
			return e.attrs[i+1]
		}
	}
	return ""
}

// readMetadata decodes the metadata event at off: its string table, then
// the element tree root → metadata → class → field/annotation/setting, into
// c.classes.
func (c *chunk) readMetadata(off int) error {
	d := c.d
	d.pos = off
	size := d.long(4)
	if id := d.long(8); d.err == nil && id != 0 {
		d.fail("the metadata offset points at an event of type %d, not metadata", id)
	}
	end := off + int(size)
	d.long(8) // start time
	d.long(8) // duration
	d.long(8) // metadata id
	n := d.length()
	strs := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		s, _, isRef := d.str()
		if isRef {
			d.fail("metadata string %d is a constant-pool reference", i)
		}
		strs = append(strs, s)
	}
	root := c.readElement(strs, 0)
	if d.err != nil {
		return d.err
	}
	if d.pos > end {
		d.fail("metadata event runs past its size %d", size)
		return d.err
	}
	c.buildClasses(root)
	return d.err
}

func (c *chunk) readElement(strs []string, depth int) *element {
	d := c.d
	if depth > maxDepth {
		d.fail("metadata elements nest more than %d deep", maxDepth)
		return nil
	}
	at := func() string {
		i := d.long(4)
		if d.err == nil && (i < 0 || i >= int64(len(strs))) {
			d.fail("metadata string index %d outside the table of %d", i, len(strs))
			return ""
		}
		if d.err != nil {
			return ""
		}
		return strs[i]
	}
	e := &element{name: at()}
	na := d.length()
	e.attrs = make([]string, 0, 2*min(na, 16))
	for i := 0; i < na && d.err == nil; i++ {
		k := at()
		e.attrs = append(e.attrs, k, at())
	}
	nc := d.length()
	for i := 0; i < nc && d.err == nil; i++ {
		e.children = append(e.children, c.readElement(strs, depth+1))
	}
	return e
}

// buildClasses turns the element tree's class elements into c.classes.
func (c *chunk) buildClasses(root *element) {
	c.classes = map[int64]*class{}
	c.byName = map[string]*class{}
	var elems []*element
	for _, m := range root.children {
		if m != nil && m.name == "metadata" {
			for _, e := range m.children {
				if e != nil && e.name == "class" {
					elems = append(elems, e)
				}
			}
		}
	}
	for _, e := range elems {
		id, err := strconv.ParseInt(e.attr("id"), 10, 64)
		if err != nil {
			c.d.fail("metadata class %q has id %q", e.attr("name"), e.attr("id"))
			return
		}
		t := &class{id: id, name: e.attr("name"), super: e.attr("superType")}
		c.classes[id] = t
		c.byName[t.name] = t
	}
	for _, e := range elems {
		id, _ := strconv.ParseInt(e.attr("id"), 10, 64)
		t := c.classes[id]
		for _, f := range e.children {
			if f == nil || f.name != "field" {
				continue
			}
			ft, err := strconv.ParseInt(f.attr("class"), 10, 64)
			if err != nil {
				c.d.fail("field %s.%s has class %q", t.name, f.attr("name"), f.attr("class"))
				return
			}
			fd := field{name: f.attr("name"), typeID: ft, pool: f.attr("constantPool") == "true", array: f.attr("dimension") == "1"}
			for _, a := range f.children {
				if a == nil || a.name != "annotation" {
					continue
				}
				aid, _ := strconv.ParseInt(a.attr("class"), 10, 64)
				if at := c.classes[aid]; at != nil {
					switch at.name {
					case "jdk.jfr.Timespan":
						fd.timespan = a.attr("value")
					case "jdk.jfr.Timestamp":
						fd.stamp = a.attr("value")
					}
				}
			}
			t.fields = append(t.fields, fd)
		}
	}
	if s := c.byName["java.lang.String"]; s != nil {
		c.stringClassID = s.id
	}
}
