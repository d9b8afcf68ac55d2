package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/protobuf/encoding/protowire"
)

// Pyroscope's querier service over the Connect protocol, with binary
// protobuf bodies (application/proto). Field numbers are those of
// github.com/grafana/pyroscope/api querier/v1/querier.proto and
// types/v1/types.proto.
const (
	pyroService = "/querier.v1.QuerierService/"

	// SelectMergeStacktracesRequest and SelectMergeProfileRequest share
	// these.
	pyroReqType     = 1
	pyroReqSelector = 2
	pyroReqStart    = 3 // milliseconds since the epoch
	pyroReqEnd      = 4
	pyroReqFormat   = 6 // SelectMergeStacktracesRequest only
	pyroFormatPprof = 4 // PROFILE_FORMAT_PPROF

	pyroRespPprof   = 5 // SelectMergeStacktracesResponse.pprof (PprofProfile)
	pyroPprofProfil = 1 // PprofProfile.profile (google.v1.Profile: pprof's fields)
)

// pyroscopeProfile asks for the merged profile: SelectMergeStacktraces
// with the pprof format (Pyroscope's current call), falling back to the
// deprecated SelectMergeProfile when the server does not have it (an
// unimplemented answer, or an answer without the pprof field from a
// server that predates the format), as profilecli does.
func (c *client) pyroscopeProfile(ctx context.Context, s *Source) ([]byte, error) {
	var req []byte
	req = protowire.AppendTag(req, pyroReqType, protowire.BytesType)
	req = protowire.AppendString(req, s.Type)
	req = protowire.AppendTag(req, pyroReqSelector, protowire.BytesType)
	req = protowire.AppendString(req, s.Query)
	req = protowire.AppendTag(req, pyroReqStart, protowire.VarintType)
	req = protowire.AppendVarint(req, uint64(s.From.UnixMilli()))
	req = protowire.AppendTag(req, pyroReqEnd, protowire.VarintType)
	req = protowire.AppendVarint(req, uint64(s.To.UnixMilli()))

	withFormat := protowire.AppendTag(append([]byte(nil), req...), pyroReqFormat, protowire.VarintType)
	withFormat = protowire.AppendVarint(withFormat, pyroFormatPprof)
	body, err := c.connect(ctx, "SelectMergeStacktraces", withFormat)
	if err == nil {
		if prof, ok, perr := pprofField(body); perr != nil {
			return nil, fmt.Errorf("SelectMergeStacktraces: malformed answer: %v", perr)
		} else if ok {
			return prof, nil
		}
		// A server before PROFILE_FORMAT_PPROF ignores the field and
		// answers a flame graph.
	} else if !unimplemented(err) {
		return nil, err
	}
	return c.connect(ctx, "SelectMergeProfile", req)
}

// connect makes one unary Connect call with a binary body.
func (c *client) connect(ctx context.Context, method string, req []byte) ([]byte, error) {
	return c.do(ctx, http.MethodPost, pyroService+method, nil, "application/proto", req)
}

// unimplemented reports an answer meaning "no such method here": Connect's
// unimplemented code, or a 404 from a server or proxy that does not route
// the path.
func unimplemented(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.Code == "unimplemented" || se.Status == http.StatusNotFound)
}

// pprofField reads SelectMergeStacktracesResponse.pprof.profile.
func pprofField(b []byte) (prof []byte, ok bool, err error) {
	pp, ok, err := bytesField(b, pyroRespPprof)
	if err != nil || !ok {
		return nil, ok, err
	}
	prof, _, err = bytesField(pp, pyroPprofProfil)
	return prof, true, err // an empty PprofProfile is an empty profile
}

// bytesField returns the last length-delimited field num of message b.
func bytesField(b []byte, num protowire.Number) (v []byte, ok bool, err error) {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, false, protowire.ParseError(l)
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			val, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, false, protowire.ParseError(m)
			}
			v, ok, b = val, true, b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(n, typ, b)
		if m < 0 {
			return nil, false, protowire.ParseError(m)
		}
		b = b[m:]
	}
	return v, ok, nil
}

// eachField calls fn for every length-delimited field of message b.
func eachField(b []byte, fn func(protowire.Number, []byte)) error {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			fn(n, v)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(n, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
	}
	return nil
}

// countSamples counts a pprof profile's samples (field 2 of Profile),
// expanding it first with decompress (within max bytes) when it is
// gzipped; -1 for a gzipped profile and no decompress (not counted).
func countSamples(data []byte, max int64, decompress func([]byte, int64) ([]byte, error)) (int, error) {
	if len(data) == 0 {
		return 0, nil
	}
	if len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
		if decompress == nil {
			return -1, nil
		}
		raw, err := decompress(data, max)
		if err != nil {
			return 0, err
		}
		data = raw
	}
	n := 0
	err := eachField(data, func(num protowire.Number, _ []byte) {
		if num == 2 {
			n++
		}
	})
	return n, err
}
