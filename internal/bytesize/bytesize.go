// Package bytesize reads and writes byte sizes the way people write them in flags, config files
// and query strings: "512MiB", "10mb", "20 KiB", "1048576". Multiples are binary (1 MB = 1 MiB =
// 1,048,576 bytes), as in Flink's MemorySize, so "10mb" means what Flink's akka.framesize means.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// units, longest suffix first so that "kib" is not read as "b".
var units = []struct {
	suffix string
	mult   int64
}{
	{"tib", 1 << 40}, {"gib", 1 << 30}, {"mib", 1 << 20}, {"kib", 1 << 10},
	{"tb", 1 << 40}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10},
	{"bytes", 1}, {"t", 1 << 40}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"b", 1},
}

// Parse reads a non-negative size: a whole number with an optional unit (b, k, kb, kib, m, mb,
// mib, g, gb, gib, t, tb, tib, bytes; any case, spaces allowed between number and unit).
func Parse(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid size %q (want a whole number of bytes with an optional unit, e.g. 1048576, 512MiB, 20kb)", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// Format writes n with the largest binary unit that divides it exactly ("512MiB", "1536KiB",
// "1000"), so that Parse(Format(n)) == n and defaults read as people wrote them.
func Format(n int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// Value is a flag.Value holding a size, for flag.Var and pflag alike.
type Value struct{ P *int64 }

// String formats the size (flag prints defaults with it).
func (v Value) String() string {
	if v.P == nil {
		return "0"
	}
	return Format(*v.P)
}

// Set parses a size.
func (v Value) Set(s string) error {
	n, err := Parse(s)
	if err != nil {
		return err
	}
	*v.P = n
	return nil
}

// Type names the value in pflag's help ("size").
func (v Value) Type() string { return "size" }
