package wasmhost

import (
	"context"
	"testing"
)

// BenchmarkHandle is the single-threaded instantiate loop in-process, per
// keep-resident setting (2 MiB guest memory, 1 MiB touched):
//
//	go test -run XXX -bench Handle ./workloads/wasmhost/
func BenchmarkHandle(b *testing.B) {
	for _, keep := range []int64{0, 64 << 10, 256 << 10, 1 << 20, 2 << 20} {
		b.Run("keep="+FormatSize(keep), func(b *testing.B) {
			h, err := New(context.Background(), Config{KeepResident: keep, PoolSize: 4})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			req := []byte("GET /plugin HTTP/1.1\r\n\r\n")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := h.Handle(context.Background(), FuncHandle, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHandleParallel is the same under GOMAXPROCS goroutines
// (-cpu 1,2,4,...), each with its own instance and slot.
func BenchmarkHandleParallel(b *testing.B) {
	for _, keep := range []int64{0, 1 << 20, 2 << 20} {
		b.Run("keep="+FormatSize(keep), func(b *testing.B) {
			h, err := New(context.Background(), Config{KeepResident: keep, PoolSize: 64})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			req := []byte("GET /plugin HTTP/1.1\r\n\r\n")
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := h.Handle(context.Background(), FuncHandle, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
