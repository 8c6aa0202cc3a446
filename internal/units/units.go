// Package units formats the quantities Preflight's reports and finding texts show to people:
// byte counts in binary units (as Flink's MemorySize counts them) and lists of subtask indexes
// compressed into ranges. Parsing sizes from flags stays in internal/bytesize.
package units

import (
	"strconv"
	"strings"
)

// Bytes formats a byte count with binary units and one decimal: "0 B", "790 B", "1.5 MiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit && f > -unit {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + u
		}
	}
	return strconv.FormatFloat(f/unit, 'f', 1, 64) + " PiB"
}

// BytesExact formats a byte count for prose that a reader may compare with a configured limit:
// the rounded figure and the exact count, "168.0 MiB = 176160768 bytes"; below 1 KiB only the
// count, "684 bytes", "1 byte".
func BytesExact(n int64) string {
	exact := Plural(n, "byte")
	if n < 1024 && n > -1024 {
		return exact
	}
	return Bytes(n) + " = " + exact // no parentheses: callers often write it inside their own
}

// Ranges compresses ascending subtask indexes into runs: [0 1 2 3 7] is "0-3, 7". Indexes
// out of order or repeated are written as they come; no indexes give "".
func Ranges(idx []int32) string {
	var b strings.Builder
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(idx[i])))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(int(idx[j])))
		}
		i = j + 1
	}
	return b.String()
}

// Plural joins a count and a noun, adding "s" unless the count is one: "1 operator",
// "6 operators", "0 subtasks". Nouns with another plural form pass it as plural.
func Plural(n int64, singular string, plural ...string) string {
	word := singular
	if n != 1 {
		word = singular + "s"
		if len(plural) > 0 {
			word = plural[0]
		}
	}
	return strconv.FormatInt(n, 10) + " " + word
}

// Thousands renders n with comma separators, for counts in prose: 29995 → "29,995".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, d := range s {
		if i > 0 && s[i-1] != '-' && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}
