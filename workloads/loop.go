package workloads

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/profdiff/profdiff/workloads/loadgen"
)

// runLoop drives a workload's in-process loop: one POST for the warmup
// (discarded), then one for the measured window, with the server's CPU
// time read around it. The workload answers each with a loadgen.Report.
func runLoop(ctx context.Context, endpoint string, warmup, window time.Duration, serverCPU func() time.Duration) (*loadgen.Report, error) {
	var warmFailed int64
	if warmup > 0 {
		wrep, err := postLoop(ctx, endpoint, warmup)
		if err != nil {
			return nil, fmt.Errorf("warmup: %w", err)
		}
		warmFailed = wrep.Failed()
	}
	cpu0 := serverCPU()
	rep, err := postLoop(ctx, endpoint, window)
	if err != nil {
		return nil, err
	}
	rep.WarmupFailed = warmFailed
	if cpu1 := serverCPU(); cpu1 > cpu0 {
		rep.SetServerCPU(cpu1 - cpu0)
	}
	rep.WarmupS = warmup.Seconds()
	return rep, nil
}

func postLoop(ctx context.Context, endpoint string, d time.Duration) (*loadgen.Report, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("seconds", strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
	u.RawQuery = q.Encode()
	// The loop runs for d; allow generous slack for the last iteration and
	// the answer, but never wait unbounded.
	var rep loadgen.Report
	if err := doJSON(ctx, http.MethodPost, u.String(), d+30*time.Second, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

// fetchJSON GETs a small JSON document.
func fetchJSON(ctx context.Context, u string) (any, error) {
	var v any
	err := doJSON(ctx, http.MethodGet, u, 10*time.Second, &v)
	return v, err
}

// doJSON sends a request without a body and decodes a 200 answer's JSON
// (at most 1 MiB) into v, within timeout.
func doJSON(ctx context.Context, method, u string, timeout time.Duration, v any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, u, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s %s: %v", method, u, err)
	}
	return nil
}
