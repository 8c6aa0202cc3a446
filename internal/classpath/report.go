package classpath

import (
	"path/filepath"
	"sort"

	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/jarindex"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// verdict follows the same documented policy as the rescale check (findings.verdictOf): DENY
// when a finding is at or above the fail level, ALLOW_WITH_WARNINGS when any finding below it
// is WARNING or ERROR, ALLOW otherwise.
func verdict(fs []findings.Finding, fail findings.Severity) pb.Verdict {
	if fail == findings.SeverityUnspecified {
		fail = findings.Error
	}
	v := pb.Verdict_VERDICT_ALLOW
	for _, f := range fs {
		if f.Severity >= fail {
			return pb.Verdict_VERDICT_DENY
		}
		if f.Severity >= findings.Warning {
			v = pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS
		}
	}
	return v
}

func (a *analysis) report() *pb.ClasspathReport {
	sort.SliceStable(a.results, func(i, j int) bool {
		x, y := a.results[i].f, a.results[j].f
		if x.Severity != y.Severity {
			return x.Severity > y.Severity
		}
		return x.RuleID < y.RuleID
	})
	fs := make([]findings.Finding, len(a.results))
	rep := &pb.ClasspathReport{JobJar: jarSummary(a.job, filepath.Base(a.job.Path))}
	for i, r := range a.results {
		fs[i] = r.f
		rep.Findings = append(rep.Findings, &pb.Finding{
			RuleId: r.f.RuleID, Title: r.f.Title, Severity: pb.Severity(r.f.Severity),
			Message: r.f.Message, Remediation: r.f.Remediation, References: r.f.References,
		})
		rep.Details = append(rep.Details, r.d)
	}
	rep.Verdict = verdict(fs, a.in.FailLevel)
	c := a.c
	cs := &pb.ClassloadingSummary{
		FlinkVersion: c.version.String(), FlinkVersionSource: c.versionSource, ResolveOrder: c.resolveOrder,
		ParentFirstPatterns: c.patterns, PluginParentFirstPatterns: c.pluginPattern, ScalaVersion: c.scala,
		JavaVersion: int32(a.in.JavaVersion),
	}
	if c.conf != nil {
		cs.ConfigFile = c.conf.File
	}
	for i, j := range c.lib {
		cs.Lib = append(cs.Lib, jarSummary(j, c.libNames[i]))
	}
	for _, p := range c.plugins {
		ps := &pb.PluginSummary{Name: p.name}
		for _, j := range p.jars {
			ps.Jars = append(ps.Jars, filepath.Base(j.Path))
		}
		cs.Plugins = append(cs.Plugins, ps)
	}
	rep.Cluster = cs
	return rep
}

func jarSummary(j *jarindex.Jar, name string) *pb.JarSummary {
	s := &pb.JarSummary{Path: name, SizeBytes: j.Size, Entries: int32(j.Entries), Classes: int32(len(j.Classes)),
		MultiRelease: j.MultiRelease, Signed: len(j.Signatures) > 0, NestedJars: j.Nested}
	for i := range j.Classes {
		if m := int32(j.Classes[i].Major); m > s.MaxClassMajor && j.Classes[i].Release == 0 {
			s.MaxClassMajor = m
		}
	}
	for _, a := range j.Artifacts {
		s.Artifacts = append(s.Artifacts, a.GroupID+":"+a.ArtifactID+":"+a.Version)
	}
	return s
}
