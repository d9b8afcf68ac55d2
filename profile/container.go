package profile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	kflate "github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"

	"github.com/profdiff/profdiff/profile/inflate"
	"github.com/profdiff/profdiff/profile/internal/bounded"
)

// Containers are layers in front of any format: gzip (up to two layers, as
// a .pb.gz compressed again in transit) and a zip archive holding one file
// (how traces are attached to issues). Unwrapping them is bounded by the
// size limit as the bytes arrive, so that a compression bomb fails once it
// passes the limit, having held no more than the limit. The size a
// container announces (a gzip trailer's ISIZE, a zip entry's uncompressed
// size, an HTTP Content-Length) is a hint, never an allocation: see
// readAll.

// maxGzipLayers is how many gzip layers are unwrapped; a profile gzipped
// twice is still a profile, a third layer is not worth reading.
const maxGzipLayers = 2

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// isZip reports whether data starts like a zip archive: a local file header,
// or the end-of-central-directory record alone of an empty archive.
func isZip(data []byte) bool {
	return bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06"))
}

// zipCut says that data, which starts with a zip member, was cut short:
// the record that closes every zip archive (the end of its central
// directory: 22 bytes and a comment of up to 65,535, at the end) is not in
// its last bytes, or runs past the end. It returns "" when the record is
// whole, and the archive is broken in some other way.
func zipCut(data []byte) string {
	const eocdLen, eocdMax = 22, 22 + 65535
	if !bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return ""
	}
	first := ""
	if len(data) >= 30 {
		n := int(data[26]) | int(data[27])<<8 // the local header's name length
		first = fmt.Sprintf(" (its first member: %q)", data[30:min(len(data), 30+n)])
	}
	from := max(0, len(data)-eocdMax)
	at := bytes.LastIndex(data[from:], []byte("PK\x05\x06"))
	if at < 0 {
		return fmt.Sprintf("zip archive cut short: the file ends at byte %d without the record that closes every zip archive, so its directory is lost%s", len(data), first)
	}
	at += from
	if rec := data[at:]; len(rec) < eocdLen || len(rec) < eocdLen+(int(rec[20])|int(rec[21])<<8) {
		return fmt.Sprintf("zip archive cut short: the file ends at byte %d inside the record that closes it, at byte %d%s", len(data), at, first)
	}
	return ""
}

// ReadLimited reads r to its end, failing (ErrTooLarge, with the limit in
// the message) as soon as more than maxSize bytes have arrived, so that it
// never holds more than maxSize bytes (0 means DefaultMaxSize). It is how
// Load reads files, standard input and HTTP bodies; errors do not name the
// source, which the caller adds.
func ReadLimited(r io.Reader, maxSize int64) ([]byte, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	return readSized(r, maxSize, 0, false)
}

// readSized is ReadLimited for a reader expected to hold size bytes (0:
// unknown), read into one buffer of that size when it is right; a size
// past the limit fails at once. trusted says where size comes from: a
// regular file's own stat (trusted, allocated at once) or a peer's word
// such as a Content-Length (a hint: see readAll).
func readSized(r io.Reader, maxSize, size int64, trusted bool) ([]byte, error) {
	tooLarge := mark(ErrTooLarge, fmt.Errorf("larger than the %s limit", FormatSize(maxSize)))
	if size > maxSize {
		return nil, tooLarge
	}
	first := int64(0)
	if !trusted {
		first = inflate.FirstSize(0)
	}
	data, err := readAll(r, maxSize, size, first)
	switch {
	case errors.Is(err, errPastLimit):
		return nil, tooLarge
	case err != nil:
		return nil, err
	}
	return data, nil
}

// Decompress strips up to two gzip layers from data, each bounded by
// maxSize (0 means DefaultMaxSize) as it is decompressed: a stream that
// expands past the limit fails with ErrTooLarge as soon as it passes it,
// a broken one with ErrCorrupt. Data that is not gzipped is returned as
// is. It is the decompression Parse does, for callers that need the bytes
// (profile/capture validates downloads with it); errors do not name the
// source.
func Decompress(data []byte, maxSize int64) ([]byte, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	var l Loaded
	out, _, err := l.ungzipLayers(data, maxSize, 0)
	return out, err
}

// ungzipLayers strips up to maxGzipLayers gzip layers from data, of which
// the first stripped were stripped already (data is their content),
// recording each in l.Containers. gzipped reports whether there was at
// least one.
func (l *Loaded) ungzipLayers(data []byte, maxSize int64, stripped int) (out []byte, gzipped bool, err error) {
	gzipped = stripped > 0 || isGzip(data)
	for layers := 0; ; layers++ {
		if layers > 0 && len(bytes.TrimSpace(data)) == 0 {
			return nil, gzipped, mark(ErrEmpty, errors.New("empty file (gzip stream holds no data)"))
		}
		if layers >= stripped && (layers == maxGzipLayers || !isGzip(data)) {
			return data, gzipped, nil
		}
		l.Containers = append(l.Containers, "gzip")
		if layers < stripped {
			continue
		}
		in := data
		if data, err = gunzip(in, maxSize); err != nil {
			return nil, gzipped, err
		}
		if layers+1 < maxGzipLayers && isGzip(data) {
			// A gzip inside a gzip: both are read again as one stream,
			// so that the inner stream (up to the limit) and what it
			// expands to are never held together.
			n := len(data)
			data = nil
			bounded.DropLarge(int64(n))
			if data, err = gunzipTwice(bytes.NewReader(in), maxSize, int64(len(in))); err != nil {
				return nil, gzipped, err
			}
			l.Containers = append(l.Containers, "gzip")
			layers++
		}
	}
}

// gunzipTwice decompresses the two gzip layers of r, a stream of
// compressed bytes, as one stream, failing (ErrTooLarge) once the inner
// layer's output passes maxSize: the outer layer's output is never held,
// so a gzip of a gzip bomb is refused holding the limit once.
func gunzipTwice(r io.Reader, maxSize, compressed int64) ([]byte, error) {
	outer, err := kgzip.NewReader(r)
	if err != nil {
		return nil, mark(ErrCorrupt, fmt.Errorf("corrupt gzip header: %v", err))
	}
	return gunzipStream(outer, maxSize, compressed, 0)
}

// parseZip parses the one member of a zip archive, the container named in
// front of whatever the member's own layers are.
func (l *Loaded) parseZip(data []byte, maxSize int64) (*Loaded, error) {
	inner, name, err := unzipSingle(data, maxSize)
	if err != nil {
		return nil, &Error{l.Source, err}
	}
	il, err := parse(l.Source, inner, maxSize, true, true, 0)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			pe.Err = fmt.Errorf("in zip member %s: %w", name, pe.Err)
		}
		return nil, err
	}
	il.Warnings = append(l.Warnings, il.Warnings...)
	il.Containers = append(append(l.Containers, "zip"), il.Containers...)
	return il, nil
}

// gunzip decompresses one gzip layer, data, failing once the output passes
// maxSize. It is the one way gzip is read (gunzipFile is the same for a
// mapped file): package inflate decodes the common case, one member that
// decodes cleanly to the size its trailer gives, in one buffer (about 1.5
// times the speed of a streaming reader); anything it does not take
// (several members, trailing bytes, a size past the limit or past what
// the input could expand to, corrupt data) is read again by gunzipStream,
// whose errors say what is wrong.
func gunzip(data []byte, maxSize int64) ([]byte, error) {
	if out, err := inflate.Gunzip(data, maxSize); err == nil {
		return out, nil
	}
	return gunzipStream(bytes.NewReader(data), maxSize, int64(len(data)), gzipSize(data))
}

// gunzipStream decompresses the gzip stream r, of compressed bytes and
// said to expand to hint bytes, with github.com/klauspost/compress/gzip
// into readAll's buffer: every member, the hint believed only as far as
// readAll believes one, failing (ErrTooLarge) once the output passes
// maxSize and ErrCorrupt with what is wrong and where. klauspost's reader
// rather than compress/gzip's: on what inflate refuses whole (the 200k
// pair written as two gzip members a file) it is 1.5 times as fast, and
// zip members are inflated by its flate reader too (unzipSingle), so
// every stream is read by one implementation.
func gunzipStream(r io.Reader, maxSize, compressed, hint int64) ([]byte, error) {
	zr, err := kgzip.NewReader(r)
	if err != nil {
		return nil, mark(ErrCorrupt, fmt.Errorf("corrupt gzip header: %v", err))
	}
	out, err := readAll(zr, maxSize, hint, inflate.FirstSize(compressed))
	switch {
	case errors.Is(err, errPastLimit):
		return nil, mark(ErrTooLarge, fmt.Errorf("gzip stream expands past the %s limit", FormatSize(maxSize)))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, mark(ErrCorrupt, fmt.Errorf("truncated gzip stream after %d bytes", len(out)))
	case err != nil:
		return nil, mark(ErrCorrupt, fmt.Errorf("corrupt gzip stream after %d bytes: %v", len(out), err))
	}
	return out, nil
}

// gzipSize is the size a gzip stream says it expands to: the ISIZE field
// that ends it, the size modulo 2^32 of its last member. For the common
// single-member stream under 4 GiB it is exact; in a truncated or crafted
// file it is any four bytes, so it is only ever readAll's hint.
func gzipSize(data []byte) int64 {
	if len(data) < 18 { // a 10-byte header and the 8-byte trailer
		return 0
	}
	return int64(binary.LittleEndian.Uint32(data[len(data)-4:]))
}

// unzipSingle returns the one file of a zip archive, bounded by maxSize.
// Folders and macOS resource forks do not count as files.
func unzipSingle(data []byte, maxSize int64) ([]byte, string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if cut := zipCut(data); cut != "" {
			return nil, "", mark(ErrCorrupt, errors.New(cut))
		}
		return nil, "", mark(ErrCorrupt, fmt.Errorf("corrupt zip archive: %v", err))
	}
	zr.RegisterDecompressor(zip.Deflate, kflate.NewReader)
	var files []*zip.File
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		files = append(files, f)
	}
	switch len(files) {
	case 0:
		return nil, "", mark(ErrEmpty, fmt.Errorf("empty zip archive (%s)", zipHolds(zr.File)))
	case 1:
	default:
		return nil, "", mark(ErrUnsupported, fmt.Errorf("zip archive with %d files (%s): profdiff reads a zip holding exactly one profile; unzip it and name the file", len(files), zipHolds(files)))
	}
	f := files[0]
	// The central directory's size is what archive/zip holds the member
	// to (a member that inflates to more fails), so a member announced
	// past the limit is refused without inflating it.
	if f.UncompressedSize64 > uint64(maxSize) {
		return nil, f.Name, mark(ErrTooLarge, fmt.Errorf("zip member %s expands to %d bytes, past the %s limit", f.Name, f.UncompressedSize64, FormatSize(maxSize)))
	}
	rc, err := f.Open()
	if err != nil {
		return nil, f.Name, mark(ErrCorrupt, fmt.Errorf("zip member %s: %v", f.Name, err))
	}
	defer rc.Close()
	out, err := readAll(rc, maxSize, int64(f.UncompressedSize64), inflate.FirstSize(int64(f.CompressedSize64)))
	switch {
	case errors.Is(err, errPastLimit):
		return nil, f.Name, mark(ErrTooLarge, fmt.Errorf("zip member %s expands past the %s limit", f.Name, FormatSize(maxSize)))
	case errors.Is(err, zip.ErrFormat) && uint64(len(out)) >= f.UncompressedSize64:
		// archive/zip stops a member at the size its directory gives.
		return nil, f.Name, mark(ErrCorrupt, fmt.Errorf("zip member %s expands past the %d bytes the archive's directory gives", f.Name, f.UncompressedSize64))
	case err != nil:
		return nil, f.Name, mark(ErrCorrupt, fmt.Errorf("zip member %s: corrupt after %d bytes: %v", f.Name, len(out), err))
	}
	return out, f.Name, nil
}

// zipHolds says what an archive holds: "no files", or the first names
// with the number of the rest.
func zipHolds(files []*zip.File) string {
	if len(files) == 0 {
		return "no files"
	}
	names := make([]string, 0, 4)
	for i, f := range files {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(files)-3))
			break
		}
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// readAll is bounded.ReadAll: r read to its end into one buffer, failing
// with errPastLimit once more than maxSize bytes arrive, having held at
// most maxSize bytes; hint is the size r is said to have, believed only as
// far as first and the bytes that really arrived allow.
func readAll(r io.Reader, maxSize, hint, first int64) ([]byte, error) {
	return bounded.ReadAll(r, maxSize, hint, first)
}

// errPastLimit is readAll's error for a reader with more than the limit.
var errPastLimit = bounded.ErrPastLimit
