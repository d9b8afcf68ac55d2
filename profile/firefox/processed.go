package firefox

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// The Firefox Profiler's processed format: what profiler.firefox.com
// saves (and samply writes; no samply file is tested here),
// meta.preprocessedProfileVersion telling the version. Its tables are objects of columns ({"frame": […], "prefix":
// […], "length": n}), per thread in older versions and in
// "shared" from version 60 on; the strings are a "stringArray", per
// thread before version 56 and shared from then on. Each table is taken
// from the thread where it has it, else from "shared".
//
// A sample names a stack; a stack its frame and its caller ("prefix",
// or from version 66 "prefixOffset", the distance back to it); a frame
// its function ("func"), its line, its category, and for native code its
// library ("lib", or the function's resource); a function its name, and
// for JavaScript its file ("fileName", or from version 58 a row of the
// "sources" table). Samples have a "weight" column (null: one each) of
// a "weightType", and their times as "time" or "timeDeltas".
//
// Frames are named as the Gecko reader names them: processing made each
// function of a location string by the rule parseLocation follows, so a
// function's name, file and library are read as they are, and an address
// the profiler did not symbolicate (a function named "0x…") is named by
// its library.

// column is a table's column of numbers, NaN for null.
type column []float64

func (c *column) UnmarshalJSON(b []byte) error {
	var v []*float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = make(column, len(v))
	for i, x := range v {
		if x == nil {
			(*c)[i] = math.NaN()
		} else {
			(*c)[i] = *x
		}
	}
	return nil
}

// at returns c[i] as an int, false where it is absent, null or no integer.
func (c column) at(i int) (int, bool) {
	if i < 0 || i >= len(c) {
		return 0, false
	}
	v := c[i]
	if v != math.Trunc(v) || math.Abs(v) > math.MaxInt32 {
		return 0, false
	}
	return int(v), true
}

type pStackTable struct {
	Frame        column `json:"frame"`
	Prefix       column `json:"prefix"`
	PrefixOffset column `json:"prefixOffset"`
	Length       int    `json:"length"`
}

type pFrameTable struct {
	Func     column `json:"func"`
	Line     column `json:"line"`
	Category column `json:"category"`
	Lib      column `json:"lib"`
	Length   int    `json:"length"`
}

type pFuncTable struct {
	Name       column `json:"name"`
	Resource   column `json:"resource"`
	FileName   column `json:"fileName"`
	Source     column `json:"source"`
	LineNumber column `json:"lineNumber"`
	Length     int    `json:"length"`
}

type pResourceTable struct {
	Name   column `json:"name"`
	Type   column `json:"type"`
	Length int    `json:"length"`
}

type pSources struct {
	Filename column `json:"filename"`
	Length   int    `json:"length"`
}

// pTables are the tables a thread or "shared" may hold.
type pTables struct {
	StackTable    *pStackTable    `json:"stackTable"`
	FrameTable    *pFrameTable    `json:"frameTable"`
	FuncTable     *pFuncTable     `json:"funcTable"`
	ResourceTable *pResourceTable `json:"resourceTable"`
	Sources       *pSources       `json:"sources"`
	StringArray   []string        `json:"stringArray"`
}

type pThread struct {
	Name        string `json:"name"`
	ProcessType string `json:"processType"`
	Samples     struct {
		Stack      column `json:"stack"`
		Time       column `json:"time"`
		TimeDeltas column `json:"timeDeltas"`
		Weight     column `json:"weight"`
		WeightType string `json:"weightType"`
		Length     int    `json:"length"`
	} `json:"samples"`
	pTables
}

type processedProfile struct {
	Meta struct {
		meta
		SampleUnits *struct {
			Time string `json:"time"`
		} `json:"sampleUnits"`
	} `json:"meta"`
	Libs    []struct{ Name string } `json:"libs"`
	Shared  pTables                 `json:"shared"`
	Threads []pThread               `json:"threads"`
}

// processed reads the processed format (see above) into r; it returns
// nil for a file whose meta has no preprocessedProfileVersion.
func (r *reader) processed(data []byte) (*processedProfile, error) {
	var pp processedProfile
	if err := unmarshal(data, &pp); err != nil {
		return nil, err
	}
	m := &pp.Meta
	if m.PreprocessedProfileVersion == nil {
		return nil, nil
	}
	if !(m.Interval > 0 && m.Interval < maxTime) {
		return nil, fmt.Errorf("%w: meta.interval %g is out of range", ErrShape, m.Interval)
	}
	if u := m.SampleUnits; u != nil && u.Time != "" && u.Time != "ms" {
		return nil, fmt.Errorf("%w: meta.sampleUnits.time %q: sample times are not in ms (a size profile), not read", ErrShape, u.Time)
	}
	// Never nil, even empty: bucketOf reads nil names as Firefox 59's
	// category bit masks, which a processed profile never has.
	cats := make([]string, len(m.Categories))
	for i, c := range m.Categories {
		cats[i] = c.Name
	}
	libs := make([]string, len(pp.Libs))
	for i, l := range pp.Libs {
		libs[i] = l.Name
	}
	// Frames are read once per frame table: shared by every thread from
	// version 60 on.
	read := map[*pFrameTable][]frame{}
	for i := range pp.Threads {
		t := &pp.Threads[i]
		where := fmt.Sprintf("threads[%d] (%s)", i, t.Name)
		tab := t.tables(&pp.Shared)
		if tab.StackTable == nil || tab.FrameTable == nil || tab.FuncTable == nil {
			return nil, fmt.Errorf("%w: %s: no stackTable, frameTable or funcTable (in the thread or shared)", ErrShape, where)
		}
		frames, ok := read[tab.FrameTable]
		if !ok {
			var err error
			if frames, err = r.processedFrames(tab, libs); err != nil {
				return nil, fmt.Errorf("%w: %s.%v", ErrShape, where, err)
			}
			read[tab.FrameTable] = frames
		}
		if err := r.processedThread(t, where, tab.StackTable, frames, m.Interval, cats); err != nil {
			return nil, err
		}
	}
	return &pp, nil
}

// tables are the thread's tables, each from the thread where it has it,
// else from shared.
func (t *pThread) tables(shared *pTables) pTables {
	tab := pTables{
		StackTable:    or(t.StackTable, shared.StackTable),
		FrameTable:    or(t.FrameTable, shared.FrameTable),
		FuncTable:     or(t.FuncTable, shared.FuncTable),
		ResourceTable: or(t.ResourceTable, shared.ResourceTable),
		Sources:       or(t.Sources, shared.Sources),
		StringArray:   t.StringArray,
	}
	if tab.StringArray == nil {
		tab.StringArray = shared.StringArray
	}
	return tab
}

// or is own where not nil, else shared.
func or[T any](own, shared *T) *T {
	if own != nil {
		return own
	}
	return shared
}

// resourceLibrary is the Firefox Profiler's resource type of a library
// (ResourceType.Library).
const resourceLibrary = 1

// processedFrames reads a frame table.
func (r *reader) processedFrames(tab pTables, libs []string) ([]frame, error) {
	ft, fn, strs := tab.FrameTable, tab.FuncTable, tab.StringArray
	str := func(c column, i int) (string, bool) {
		s, ok := c.at(i)
		if !ok || s < 0 || s >= len(strs) {
			return "", false
		}
		return strs[s], true
	}
	frames := make([]frame, len(ft.Func))
	for i := range ft.Func {
		f, ok := ft.Func.at(i)
		if !ok || f < 0 || f >= len(fn.Name) {
			return nil, fmt.Errorf("frameTable.func[%d] is no row of the funcTable (%d functions)", i, len(fn.Name))
		}
		name, ok := str(fn.Name, f)
		if !ok {
			return nil, fmt.Errorf("funcTable.name[%d] is no string of the stringArray (%d strings)", f, len(strs))
		}
		cat, ok := ft.Category.at(i)
		if !ok {
			cat = -1
		}
		frames[i] = frame{category: cat}
		file := ""
		if s, ok := fn.Source.at(f); ok && tab.Sources != nil {
			if file, ok = str(tab.Sources.Filename, s); !ok {
				return nil, fmt.Errorf("funcTable.source[%d]: source %d has no filename of the stringArray", f, s)
			}
		} else if s, ok := fn.FileName.at(f); ok {
			if s < 0 || s >= len(strs) {
				return nil, fmt.Errorf("funcTable.fileName[%d] is no string of the stringArray (%d strings)", f, len(strs))
			}
			file = strs[s]
		}
		// A native function's library: the frame's, else its resource's.
		module := ""
		if l, ok := ft.Lib.at(i); ok && l >= 0 && l < len(libs) {
			module = libs[l]
		} else if rt := tab.ResourceTable; rt != nil {
			if res, ok := fn.Resource.at(f); ok && res >= 0 {
				if typ, _ := rt.Type.at(res); typ == resourceLibrary {
					module, _ = str(rt.Name, res)
				}
			}
		}
		line, _ := ft.Line.at(i)
		if line <= 0 && file != "" {
			line, _ = fn.LineNumber.at(f)
		}
		switch {
		case name == "(root)" && file == "":
			// dropped, as in a Gecko profile
		case strings.HasPrefix(name, "0x") && file == "":
			name = "[native]"
			if module != "" {
				name = "[" + module + "]"
			}
			frames[i].loc = r.frameLocation(name, "", module, 0)
		default:
			frames[i].loc = r.frameLocation(name, file, module, int64(max(line, 0)))
		}
	}
	return frames, nil
}

// processedThread reads a thread's stacks and samples.
func (r *reader) processedThread(t *pThread, where string, stt *pStackTable, frames []frame, interval float64, cats []string) error {
	n := len(stt.Frame)
	st := newStacks(n)
	for i := range n {
		f, ok := stt.Frame.at(i)
		if !ok {
			f = -1
		}
		pre := -1
		if stt.PrefixOffset != nil {
			off, ok := stt.PrefixOffset.at(i)
			if !ok || off < 0 {
				return fmt.Errorf("%w: %s.stackTable.prefixOffset[%d] is no offset", ErrShape, where, i)
			}
			if off > 0 {
				pre = i - off
			}
		} else if p, ok := stt.Prefix.at(i); ok {
			if p < 0 {
				return fmt.Errorf("%w: %s.stackTable.prefix[%d]: prefix %d is not an earlier stack", ErrShape, where, i, p)
			}
			pre = p
		}
		if err := st.set(i, f, pre, frames); err != nil {
			return fmt.Errorf("%w: %s.stackTable[%d]: %v", ErrShape, where, i, err)
		}
	}
	s := &t.Samples
	th := r.threadSamples(t.Name, t.ProcessType, st, frames, cats)
	deltas := s.TimeDeltas != nil
	if deltas && len(s.TimeDeltas) < len(s.Stack) {
		return fmt.Errorf("%w: %s.samples: timeDeltas has %d entries for %d samples", ErrShape, where, len(s.TimeDeltas), len(s.Stack))
	}
	tm := 0.0
	for i := range s.Stack {
		if deltas {
			if d := s.TimeDeltas[i]; !math.IsNaN(d) {
				tm += d
			}
			th.time(tm)
		} else if i < len(s.Time) && !math.IsNaN(s.Time[i]) {
			th.time(s.Time[i])
		}
		stack, ok := s.Stack.at(i)
		if !ok {
			r.noStack++
			continue
		}
		w, hasW := 0.0, false
		if i < len(s.Weight) && !math.IsNaN(s.Weight[i]) {
			w, hasW = s.Weight[i], true
		}
		if err := th.add(stack, w, hasW, s.WeightType, interval); err != nil {
			return fmt.Errorf("%w: %s.samples[%d]: %v", ErrShape, where, i, err)
		}
	}
	th.done(interval)
	return nil
}
