//go:build !linux

package loadgen

import "errors"

const epollSupported = false

func newLoops(*runner, int) ([]unit, error) {
	return nil, errors.New("the epoll engine needs Linux")
}
