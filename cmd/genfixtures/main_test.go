package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The committed fixtures must be exactly what the generator writes, so that
// anyone can regenerate them and get the same bytes.
func TestFixturesUpToDate(t *testing.T) {
	for name, want := range Files() {
		got, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date: run go run ./cmd/genfixtures", name)
		}
	}
}

func TestFixtureTotals(t *testing.T) {
	for _, s := range []shares{net10, net11} {
		total := 0
		for _, st := range build(s) {
			total += st.count
		}
		if total != 10000 {
			t.Errorf("fixture side has %d samples, want 10000", total)
		}
	}
}
