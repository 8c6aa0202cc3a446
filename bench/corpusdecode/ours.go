package main

import (
	"context"
	"fmt"
	"os"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// modes names this decoder's modes for -mode's help.
const modes = "batch, decoder or perfile"

// passFunc returns one pass over the files with Preflight's decoder in the given mode.
func passFunc(mode string, paths []string, workers int) (pass, error) {
	ctx := context.Background()
	switch mode {
	case "batch":
		return func(fail func(int)) error {
			return checkpoint.ReadLayoutFiles(ctx, paths, workers, func(i int, _ *checkpoint.Layout, err error) error {
				if err != nil {
					fail(i)
				}
				return nil
			})
		}, nil
	case "decoder":
		x := checkpoint.NewDecoder()
		return func(fail func(int)) error {
			for i, p := range paths {
				if _, err := x.ReadLayoutFile(ctx, p); err != nil {
					fail(i)
				}
			}
			return nil
		}, nil
	case "perfile":
		return func(fail func(int)) error {
			for i, p := range paths {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				if _, err := checkpoint.ReadLayout(f); err != nil {
					fail(i)
				}
				f.Close()
			}
			return nil
		}, nil
	}
	return nil, fmt.Errorf("unknown mode %q: want %s", mode, modes)
}
