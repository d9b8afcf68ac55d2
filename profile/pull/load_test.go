package pull

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/internal/readertest"
)

// firstSample returns where the payload of data's first sample (top-level
// field 2) starts and ends.
func firstSample(t *testing.T, data []byte) (int, int) {
	t.Helper()
	for off := 0; off < len(data); {
		num, typ, n := protowire.ConsumeTag(data[off:])
		if n < 0 {
			t.Fatalf("tag at byte %d: %v", off, protowire.ParseError(n))
		}
		if num == 2 && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(data[off+n:])
			if m < 0 {
				t.Fatal(protowire.ParseError(m))
			}
			start := off + n + m - len(v)
			return start, start + len(v)
		}
		m := protowire.ConsumeFieldValue(num, typ, data[off+n:])
		if m < 0 {
			t.Fatal(protowire.ParseError(m))
		}
		off += n + m
	}
	t.Fatal("no sample")
	return 0, 0
}

// TestLoadPlaced breaks the first sample of the runtime's own goroutine
// profile inside (its bytes all continuation bytes, so no varint in it
// ends), where the top level still reads and the pprof library says only
// "bad varint": Load says where this reader stops, inside that sample,
// then the library's words, plain and gzipped, as ErrCorrupt; the model
// alone (Raw.Load) names no byte.
func TestLoadPlaced(t *testing.T) {
	data := readertest.RuntimeProfile(t, "goroutine")
	start, end := firstSample(t, data)
	bad := bytes.Clone(data)
	for i := start; i < end; i++ {
		bad[i] = 0xff
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bad)
	zw.Close()
	dir := t.TempDir()
	placed := regexp.MustCompile(`^truncated or corrupt pprof data: at byte (\d+): (bad varint[^(]*)(?: \((.+)\))?$`)
	for name, content := range map[string][]byte{"bad.pb": bad, "bad.pb.gz": gz.Bytes()} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		r, l, err := profile.LoadRaw(context.Background(), path, profile.Options{})
		if err != nil || r == nil {
			t.Fatalf("%s: LoadRaw: %v, %v: want a Raw", name, l, err)
		}
		_, err = Load(r)
		if !errors.Is(err, profile.ErrCorrupt) {
			t.Fatalf("%s: %v: want ErrCorrupt", name, err)
		}
		msg := strings.TrimPrefix(err.Error(), path+": ")
		if name == "bad.pb.gz" {
			var ok bool
			if msg, ok = strings.CutPrefix(msg, "in the gunzipped data: "); !ok {
				t.Errorf("%s: %q does not say the place counts in the gunzipped data", name, err)
			}
		}
		m := placed.FindStringSubmatch(msg)
		if m == nil {
			t.Fatalf("%s: %q, want %v", name, msg, placed)
		}
		if at, _ := strconv.Atoi(m[1]); at < start || at >= end {
			t.Errorf("%s: byte %d, outside the broken sample at bytes %d to %d", name, at, start, end)
		}
		lib := m[3] // the library's words, where they differ
		if lib == "" {
			lib = m[2]
		}
		_, merr := r.Load()
		if want := "truncated or corrupt pprof data: " + lib; !strings.HasSuffix(merr.Error(), want) {
			t.Errorf("%s: the model alone says %q, want it to end %q", name, merr, want)
		}
	}
}
