package jarindex

import "unsafe"

// unsafeString views b as a string; b is never written again (the interner's slab only grows).
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
