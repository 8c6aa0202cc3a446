// Package report renders Preflight's API answers for people and pipelines: text for terminals,
// Markdown for pull-request comments and JSON (the API's own protojson form) for machines. It only
// formats; it never decides anything, so the CLI's embedded and remote modes print the same thing.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Format is an output format.
type Format string

// The formats.
const (
	Text     Format = "text"
	JSON     Format = "json"
	Markdown Format = "markdown"
)

// ParseFormat accepts text, json, markdown (and md).
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "text", "":
		return Text, nil
	case "json":
		return JSON, nil
	case "markdown", "md":
		return Markdown, nil
	}
	return "", fmt.Errorf("unknown output format %q (want text, json or markdown)", s)
}

// WriteJSON writes any API message as indented protojson with a trailing newline. protojson
// varies its whitespace on purpose; re-indenting makes the CLI's output stable for diffs and CI.
func WriteJSON(w io.Writer, m proto.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// Bytes formats a byte count with binary units, e.g. "1.5 MiB".
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

// Ranges compresses sorted subtask indexes into "0, 4-7".
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
		if j == i {
			b.WriteString(strconv.Itoa(int(idx[i])))
		} else {
			fmt.Fprintf(&b, "%d-%d", idx[i], idx[j])
		}
		i = j + 1
	}
	return b.String()
}

// SeverityName is the short upper-case name of a severity.
func SeverityName(s pb.Severity) string {
	return strings.TrimPrefix(s.String(), "SEVERITY_")
}

// VerdictName is the short upper-case name of a verdict.
func VerdictName(v pb.Verdict) string {
	return strings.TrimPrefix(v.String(), "VERDICT_")
}

// operatorLabel names an operator the way a Flink engineer finds it: name, else uid, else ID.
func operatorLabel(name, uid, id string) string {
	switch {
	case name != "":
		return name
	case uid != "":
		return uid
	}
	return id
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}

// checkpointLine describes the file in one line.
func checkpointLine(c *pb.CheckpointSummary) string {
	if c == nil {
		return ""
	}
	parts := []string{fmt.Sprintf("format v%d", c.GetFormatVersion())}
	if c.GetWrittenBy() != "" {
		parts[0] += " (Flink " + c.GetWrittenBy() + ")"
	}
	parts = append(parts, fmt.Sprintf("checkpoint %d", c.GetCheckpointId()), Bytes(c.GetSizeBytes()),
		fmt.Sprintf("%d operators", c.GetOperatorCount()))
	if c.GetSnapshotName() != "" {
		kind := c.GetSnapshotName()
		if c.GetSavepointFormat() != "" {
			kind += " (" + c.GetSavepointFormat() + ")"
		}
		parts = append(parts, kind)
	}
	if c.GetInlineStateBytes() > 0 {
		parts = append(parts, Bytes(c.GetInlineStateBytes())+" inline state")
	}
	return strings.Join(parts, ", ")
}
