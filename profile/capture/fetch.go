package capture

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
)

// partSuffix ends the name of a download in progress; prepareDir may
// remove such files from an incomplete folder.
const partSuffix = ".part"

// fetch downloads one endpoint into a temporary file in dir, streaming
// the body so that memory does not grow with it, and refusing it once it
// passes maxSize bytes. The result names the file (part) for store.
func fetch(ctx context.Context, client *http.Client, base *url.URL, ep endpoint, seconds int, dir string, maxSize int64) result {
	r := result{ep: ep}
	u := *base
	u.Path = strings.TrimRight(base.Path, "/") + ep.path
	if ep.windowed {
		u.RawQuery = "seconds=" + strconv.Itoa(seconds)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		r.err = err
		return r
	}
	resp, err := client.Do(req)
	if err != nil {
		r.err = requestError(err)
		return r
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && ep.optional {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		r.note = fmt.Sprintf("%s: %s not exposed (404); skipped", ep.kind, ep.path)
		return r
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		msg := strings.TrimSpace(strings.SplitN(string(body), "\n", 2)[0])
		r.err = fmt.Errorf("GET %s: HTTP %s: %s", u.Path, resp.Status, msg)
		return r
	}
	r.part, r.err = download(dir, ep.file, resp.Body, maxSize)
	if r.err != nil {
		r.err = fmt.Errorf("GET %s: %v", u.Path, r.err)
	}
	return r
}

// requestError is a failed request's cause without the URL (the kind,
// logged beside it, names the endpoint), so that one cause shared by
// every kind, such as a refused connection, reads the same for each.
func requestError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// download streams body into a new file in dir and returns its path; the
// file is removed on failure, or once body passes maxSize bytes.
func download(dir, name string, body io.Reader, maxSize int64) (string, error) {
	f, err := os.CreateTemp(dir, "."+name+".*"+partSuffix)
	if err != nil {
		return "", err
	}
	n, err := io.Copy(f, io.LimitReader(body, maxSize+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxSize {
		err = fmt.Errorf("larger than %s", profile.FormatSize(maxSize))
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// store validates one downloaded result and moves it to its file. It
// returns the file written (nil when there was nothing to write), a note,
// and an error; the download is gone either way.
func store(dir string, r result, maxSize int64) (*File, string, error) {
	if r.err != nil || r.part == "" {
		return nil, r.note, r.err
	}
	defer os.Remove(r.part) // once renamed, this fails harmlessly
	f := &File{Kind: r.ep.kind, Path: r.ep.file}
	note := r.note
	dst := filepath.Join(dir, f.Path)
	if r.ep.pprof {
		data, gzipped, err := readLimited(r.part, maxSize)
		if err != nil {
			return nil, note, err
		}
		n, why, err := checkPprof(r.ep, data, maxSize)
		if err != nil {
			return nil, note, err
		}
		f.Samples = n
		if why != "" {
			note = why
		}
		if !gzipped {
			// Stored gzipped, as its name says.
			if err := os.WriteFile(r.part, gzipBytes(data), 0o644); err != nil {
				return nil, note, err
			}
		}
	} else if err := checkTrace(r.part); err != nil {
		return nil, note, err
	} else if err := gzipFile(r.part); err != nil {
		// An execution trace compresses to about half; stored gzipped,
		// as its name (trace.out.gz) says, which every reader unwraps.
		return nil, note, err
	}
	n, err := publish(r.part, dst)
	if err != nil {
		return nil, note, err
	}
	f.Bytes = n
	return f, note, nil
}

// publish makes a fully written temporary file readable and moves it to
// dst, returning its size.
func publish(part, dst string) (int64, error) {
	if err := os.Chmod(part, 0o644); err != nil {
		return 0, err
	}
	if err := os.Rename(part, dst); err != nil {
		return 0, err
	}
	st, err := os.Stat(dst)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// readLimited reads a downloaded file (already no larger than maxSize)
// and decompresses it when it is gzip with profile.Decompress, which fails
// as soon as the content passes maxSize bytes, so a small gzip bomb costs
// at most maxSize of memory and the time to inflate that much.
func readLimited(path string, maxSize int64) (data []byte, gzipped bool, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	gzipped = isGzip(raw)
	data, err = profile.Decompress(raw, maxSize)
	switch {
	case errors.Is(err, profile.ErrTooLarge):
		return nil, gzipped, fmt.Errorf("decompresses to more than %s", profile.FormatSize(maxSize))
	case err != nil:
		return nil, gzipped, fmt.Errorf("not a valid pprof profile: %v", err)
	}
	return data, gzipped, nil
}

// checkPprof checks that data, decompressed, is a pprof profile profdiff
// reads, and returns its sample count and a note: why it may be empty, or
// that it reads as another kind than the endpoint's.
func checkPprof(ep endpoint, data []byte, maxSize int64) (int, string, error) {
	p, err := pprofile.ParseUncompressed(data)
	if err != nil {
		return 0, "", fmt.Errorf("not a valid pprof profile: %v", err)
	}
	n := len(p.Sample)
	p = nil // the model below is built afresh; let this one go
	if n == 0 {
		// An empty delta is a result (no contention in the window), but
		// it usually means the profile is off in the server.
		note := ep.kind + ": no samples in the window"
		switch ep.kind {
		case "mutex":
			note += " (no contention, or the server never called runtime.SetMutexProfileFraction)"
		case "block":
			note += " (no blocking, or the server never called runtime.SetBlockProfileRate)"
		}
		return 0, note, nil
	}
	// Load it as profdiff diff will, so a file that is written is one
	// profdiff reads.
	l, err := profile.Parse(ep.file, data, maxSize)
	if err != nil {
		return 0, "", err
	}
	if got := string(l.Kind); got != ep.kind && (ep.kind == "cpu" || ep.kind == "wall" || ep.kind == "goroutine") {
		return n, fmt.Sprintf("%s: the profile reads as kind %s", ep.kind, got), nil
	}
	return n, "", nil
}

// checkTrace checks that the file starts with the header Go's execution
// tracer writes.
func checkTrace(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	if !isTrace(head[:n]) {
		return errors.New("not a Go execution trace (no \"go 1.N trace\" header)")
	}
	return nil
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// isTrace checks the header Go's execution tracer writes: "go 1.N trace"
// padded with NULs to 16 bytes.
func isTrace(b []byte) bool {
	if len(b) < 16 || !bytes.HasPrefix(b, []byte("go 1.")) {
		return false
	}
	return bytes.Contains(b[:16], []byte(" trace"))
}

// gzipFile compresses the file at path in place, streaming (the memory
// it takes does not grow with the file): the gzip stream goes to a
// temporary file beside it, which then replaces it.
func gzipFile(path string) (err error) {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".gz.*"+partSuffix)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(out.Name())
		}
	}()
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(out.Name(), path)
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}
