//go:build !unix

package checkpoint

import "os"

func openFile(name string) (*os.File, error) { return os.Open(name) }
