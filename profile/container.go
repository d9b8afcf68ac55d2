package profile

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Containers are layers in front of any format: gzip (up to two layers, as
// a .pb.gz compressed again in transit) and a zip archive holding one file
// (how traces are attached to issues). Unwrapping them is bounded by the
// size limit so that a compression bomb cannot exhaust memory.

// maxGzipLayers is how many gzip layers are unwrapped; a profile gzipped
// twice is still a profile, a third layer is not worth reading.
const maxGzipLayers = 2

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

func isZip(data []byte) bool { return bytes.HasPrefix(data, []byte("PK\x03\x04")) }

// ungzipLayers strips up to maxGzipLayers gzip layers from data, recording
// each in l.Containers. gzipped reports whether there was at least one.
func (l *Loaded) ungzipLayers(data []byte, maxSize int64) (out []byte, gzipped bool, err error) {
	gzipped = isGzip(data)
	for layers := 0; layers < maxGzipLayers && isGzip(data); layers++ {
		l.Containers = append(l.Containers, "gzip")
		data, err = gunzip(data, maxSize)
		if err != nil {
			return nil, gzipped, err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, gzipped, mark(ErrEmpty, errors.New("empty file (gzip stream holds no data)"))
		}
	}
	return data, gzipped, nil
}

// parseZip parses the one member of a zip archive, the container named in
// front of whatever the member's own layers are.
func (l *Loaded) parseZip(data []byte, maxSize int64) (*Loaded, error) {
	inner, name, err := unzipSingle(data, maxSize)
	if err != nil {
		return nil, &Error{l.Source, err}
	}
	il, err := parse(l.Source, inner, maxSize, true)
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

// gunzip decompresses data, failing once the output passes maxSize.
func gunzip(data []byte, maxSize int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, mark(ErrCorrupt, fmt.Errorf("corrupt gzip header: %v", err))
	}
	// Profiles compress about 3-10x; start with that guess.
	buf := bytes.NewBuffer(make([]byte, 0, min(int64(len(data))*4, maxSize)))
	n, err := io.Copy(buf, io.LimitReader(zr, maxSize+1))
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, mark(ErrCorrupt, fmt.Errorf("truncated gzip stream after %d bytes", n))
		}
		return nil, mark(ErrCorrupt, fmt.Errorf("corrupt gzip stream after %d bytes: %v", n, err))
	}
	if n > maxSize {
		return nil, mark(ErrTooLarge, fmt.Errorf("gzip stream expands past the %s limit", FormatSize(maxSize)))
	}
	return buf.Bytes(), nil
}

// unzipSingle returns the one file of a zip archive, bounded by maxSize.
// Folders and macOS resource forks do not count as files.
func unzipSingle(data []byte, maxSize int64) ([]byte, string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, "", mark(ErrCorrupt, fmt.Errorf("corrupt zip archive: %v", err))
	}
	var files []*zip.File
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		files = append(files, f)
	}
	if len(files) != 1 {
		names := make([]string, 0, 4)
		for i, f := range files {
			if i == 3 {
				names = append(names, "...")
				break
			}
			names = append(names, f.Name)
		}
		return nil, "", mark(ErrUnsupported, fmt.Errorf("zip archive with %d files (%s): profdiff reads a zip holding exactly one profile; unzip it and name the file", len(files), strings.Join(names, ", ")))
	}
	f := files[0]
	rc, err := f.Open()
	if err != nil {
		return nil, f.Name, mark(ErrCorrupt, fmt.Errorf("zip member %s: %v", f.Name, err))
	}
	defer rc.Close()
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(rc, maxSize+1))
	if err != nil {
		return nil, f.Name, mark(ErrCorrupt, fmt.Errorf("zip member %s: corrupt after %d bytes: %v", f.Name, n, err))
	}
	if n > maxSize {
		return nil, f.Name, mark(ErrTooLarge, fmt.Errorf("zip member %s expands past the %s limit", f.Name, FormatSize(maxSize)))
	}
	return buf.Bytes(), f.Name, nil
}
