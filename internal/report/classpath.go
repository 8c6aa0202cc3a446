package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/flinkpreflight/preflight/internal/units"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// WriteClasspathText renders a classpath check for a terminal: verdict, the job jar and the
// cluster's classloading as applied, then the findings with their fixes.
func WriteClasspathText(w io.Writer, r *pb.ClasspathReport) error {
	var b strings.Builder
	j, c := r.GetJobJar(), r.GetCluster()
	fmt.Fprintf(&b, "Flink Preflight classpath: %s\n", j.GetPath())
	fmt.Fprintf(&b, "  job jar: %s\n", jarLine(j))
	fmt.Fprintf(&b, "  cluster: %s\n", clusterLine(c))
	fmt.Fprintf(&b, "\nVERDICT: %s\n", VerdictName(r.GetVerdict()))
	b.WriteString("\nFINDINGS\n")
	if len(r.GetFindings()) == 0 {
		b.WriteString("  none\n")
	}
	for _, f := range r.GetFindings() {
		fmt.Fprintf(&b, "  %-7s %s  %s\n", SeverityName(f.GetSeverity()), f.GetRuleId(), f.GetTitle())
		writeIndented(&b, f.GetMessage(), "          ")
		if f.GetRemediation() != "" {
			writeIndented(&b, "Fix: "+f.GetRemediation(), "          ")
		}
		if len(f.GetReferences()) > 0 {
			fmt.Fprintf(&b, "          Refs: %s\n", strings.Join(f.GetReferences(), ", "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteClasspathMarkdown renders a classpath check as Markdown.
func WriteClasspathMarkdown(w io.Writer, r *pb.ClasspathReport) error {
	var b strings.Builder
	j, c := r.GetJobJar(), r.GetCluster()
	fmt.Fprintf(&b, "## Flink Preflight classpath: **%s**\n\n", VerdictName(r.GetVerdict()))
	fmt.Fprintf(&b, "- job jar `%s`: %s\n- cluster: %s\n\n", j.GetPath(), jarLine(j), clusterLine(c))
	if len(r.GetFindings()) == 0 {
		b.WriteString("No findings.\n")
	} else {
		b.WriteString("| Severity | Rule | What happens | Fix |\n|---|---|---|---|\n")
		for _, f := range r.GetFindings() {
			fmt.Fprintf(&b, "| %s | %s %s | %s | %s |\n", SeverityName(f.GetSeverity()), f.GetRuleId(), mdCell(f.GetTitle()), mdCell(f.GetMessage()), mdCell(f.GetRemediation()))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func jarLine(j *pb.JarSummary) string {
	parts := []string{units.Bytes(j.GetSizeBytes()), units.Plural(int64(j.GetEntries()), "entry", "entries"), units.Plural(int64(j.GetClasses()), "class", "classes")}
	if m := j.GetMaxClassMajor(); m >= 46 {
		parts = append(parts, fmt.Sprintf("newest class file Java %d", m-44))
	}
	if n := len(j.GetArtifacts()); n > 0 {
		parts = append(parts, units.Plural(int64(n), "bundled artifact"))
	}
	if j.GetMultiRelease() {
		parts = append(parts, "multi-release")
	}
	if j.GetSigned() {
		parts = append(parts, "signed")
	}
	return strings.Join(parts, ", ")
}

func clusterLine(c *pb.ClassloadingSummary) string {
	version := "Flink version " + c.GetFlinkVersionSource() // not given: the newest rules apply
	if v := c.GetFlinkVersion(); v != "" && v != "unknown" {
		version = fmt.Sprintf("Flink %s (%s)", v, c.GetFlinkVersionSource())
	}
	parts := []string{version, c.GetResolveOrder()}
	if c.GetScalaVersion() != "" {
		parts = append(parts, "Scala "+c.GetScalaVersion())
	}
	if c.GetJavaVersion() > 0 {
		parts = append(parts, fmt.Sprintf("Java %d", c.GetJavaVersion()))
	}
	parts = append(parts, units.Plural(int64(len(c.GetLib())), "jar")+" in lib/")
	if n := len(c.GetPlugins()); n > 0 {
		parts = append(parts, units.Plural(int64(n), "plugin"))
	}
	if c.GetConfigFile() != "" {
		parts = append(parts, "config "+c.GetConfigFile())
	}
	return strings.Join(parts, ", ")
}
