package source_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/profdiff/profdiff/profile/source"
)

// Two sides, the second a glob: each profile reaches add in order, with
// its side, and a warning both of the second side's files have comes back
// once.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "source-example")
	defer os.RemoveAll(dir)
	for name, stacks := range map[string]string{
		"base.folded":     "main;work 10\n",
		"new-1.folded.gz": "main;work 12\nmain;lock 3\n",
		"new-2.folded.gz": "main;work 11\nmain;lock 5\n",
	} {
		os.WriteFile(filepath.Join(dir, name), []byte(stacks), 0o644)
	}
	sides := []source.Side{
		{Name: "BASE", Args: []string{filepath.Join(dir, "base.folded")}},
		{Name: "NEW", Args: []string{filepath.Join(dir, "new-*.folded.gz")}},
	}
	w, err := source.Load(context.Background(), sides, source.Options{}, nil, func(it *source.Item, _ struct{}) error {
		fmt.Printf("side %d: %s, %d samples\n", it.Side, filepath.Base(it.Source), len(it.Loaded.Profile.Sample))
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	for _, line := range w.Lines {
		fmt.Println(strings.ReplaceAll(line, dir+string(filepath.Separator), ""))
	}
	// Output:
	// side 0: base.folded, 1 samples
	// side 1: new-1.folded.gz, 2 samples
	// side 1: new-2.folded.gz, 2 samples
	// named .gz but not gzip-compressed; read as is (2 profiles: new-1.folded.gz, new-2.folded.gz)
}
