// Package report renders Preflight's API answers for people and pipelines: text for terminals,
// Markdown for pull-request comments and JSON (the API's own protojson form) for machines. It only
// formats; it never decides anything, so the CLI's embedded and remote modes print the same thing.
package report

import (
	"fmt"
	"io"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/units"
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

// WriteCheck writes a check report (the answer of CheckRescale) in the given format.
func WriteCheck(w io.Writer, f Format, r *pb.RescaleReport) error {
	return WriteCheckLimited(w, f, r, DefaultLimits)
}

// WriteCheckLimited is WriteCheck with text and Markdown showing what lim allows.
func WriteCheckLimited(w io.Writer, f Format, r *pb.RescaleReport, lim Limits) error {
	return write(w, f, r, func(w io.Writer, r *pb.RescaleReport) error { return writeText(w, r, nil, lim) },
		func(w io.Writer, r *pb.RescaleReport) error { return WriteMarkdownLimited(w, r, lim) })
}

// WriteInspect writes an inspection (the answer of InspectCheckpoint) in the given format.
func WriteInspect(w io.Writer, f Format, r *pb.InspectCheckpointResponse) error {
	return write(w, f, r, WriteInspectText, WriteInspectMarkdown)
}

// WriteInspectBody is WriteInspect without the legend of the columns, for several inspections
// in a row; WriteInspectLegend then writes the legend once, after them.
func WriteInspectBody(w io.Writer, f Format, r *pb.InspectCheckpointResponse) error {
	return write(w, f, r, writeInspectTable, writeInspectMarkdownTable)
}

// WriteInspectLegend writes the legend of an inspection's columns after a blank line (nothing
// for JSON, whose fields the API documents).
func WriteInspectLegend(w io.Writer, f Format) error {
	if f == JSON {
		return nil
	}
	return writeInspectLegend(w, f == Markdown)
}

// WriteClasspath writes a classpath check in the given format.
func WriteClasspath(w io.Writer, f Format, r *pb.ClasspathReport) error {
	return write(w, f, r, WriteClasspathText, WriteClasspathMarkdown)
}

// WriteDecision writes an autoscaler decision (the answer of Decide) in the given format.
func WriteDecision(w io.Writer, f Format, r *pb.DecideResponse) error {
	return write(w, f, r, WriteDecisionText, WriteDecisionMarkdown)
}

// write dispatches on the format: the API's JSON for every message, else the message's own
// text or Markdown writer.
func write[M proto.Message](w io.Writer, f Format, m M, text, markdown func(io.Writer, M) error) error {
	switch f {
	case JSON:
		return WriteJSON(w, m)
	case Markdown:
		return markdown(w, m)
	}
	return text(w, m)
}

// WriteJSON writes any API message as indented protojson with a trailing newline. protojson
// varies its whitespace on purpose; re-indenting makes the CLI's output stable for diffs and CI.
// The indented text is streamed to w, not built. A RescaleReport is marshalled in pieces
// (jsonpieces.go), so that only a piece's compact form is held, never the whole report's.
func WriteJSON(w io.Writer, m proto.Message) error {
	d := newIndenter(w)
	if rep, ok := m.(*pb.RescaleReport); ok && len(rep.GetOperators()) > 0 {
		if err := writeReportJSON(d, rep); err != nil {
			return err
		}
		return d.finish()
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	d.write(b)
	return d.finish()
}

// SeverityName is the short upper-case name of a severity.
func SeverityName(s pb.Severity) string {
	return strings.TrimPrefix(s.String(), "SEVERITY_")
}

// VerdictName is the short upper-case name of a verdict.
func VerdictName(v pb.Verdict) string {
	return strings.TrimPrefix(v.String(), "VERDICT_")
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
	parts = append(parts, fmt.Sprintf("checkpoint %d", c.GetCheckpointId()), units.Bytes(c.GetSizeBytes()),
		units.Plural(int64(c.GetOperatorCount()), "operator"))
	if c.GetSnapshotName() != "" {
		kind := c.GetSnapshotName()
		if c.GetSavepointFormat() != "" {
			kind += " (" + c.GetSavepointFormat() + ")"
		}
		parts = append(parts, kind)
	}
	if c.GetInlineStateBytes() > 0 {
		parts = append(parts, units.Bytes(c.GetInlineStateBytes())+" inline state")
	}
	return strings.Join(parts, ", ")
}
