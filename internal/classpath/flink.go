// Package classpath is Flink Preflight's classloading pre-flight: given a job jar and a Flink
// cluster's class path (lib/, plugins/, configuration and version), it applies Flink's own
// classloading rules of that version and reports, as PF3xx findings with causes, classes and
// fixes, what would break when the job (re)starts: classes loaded twice across the user-code and
// parent class loaders (LinkageError, ClassCastException), Flink modules and plugins bundled in the
// job jar, Scala binary version and Java class file version mismatches. It indexes jars with
// internal/jarindex and never extracts them.
package classpath

import (
	"strconv"
	"strings"
)

// Flink's classloading defaults by version. Sources (apache/flink):
//   - CoreOptions.CLASSLOADER_RESOLVE_ORDER "classloader.resolve-order", default "child-first"
//     since 1.4 (FLINK-7442).
//   - CoreOptions.ALWAYS_PARENT_FIRST_LOADER_PATTERNS "classloader.parent-first-patterns.default"
//     (deprecated key "classloader.parent-first-patterns"), plus
//     "classloader.parent-first-patterns.additional" (FLINK-8645). Matching is
//     className.startsWith(pattern) in ChildFirstClassLoader.
//   - The XML patterns org.xml; javax.xml; org.apache.xerces; org.w3c were added in 1.10
//     (FLINK-14876); org.rocksdb. in 1.14 (FLINK-23649).
//   - CoreOptions.PLUGIN_ALWAYS_PARENT_FIRST_LOADER_PATTERNS
//     "plugin.classloader.parent-first-patterns.default" (+ ".additional"), 1.10+; PluginLoader
//     loads everything else of a plugin from the plugin's own folder.
var (
	patternsBase  = []string{"java.", "scala.", "org.apache.flink.", "com.esotericsoftware.kryo", "org.apache.hadoop.", "javax.annotation."}
	patternsXML   = []string{"org.xml", "javax.xml", "org.apache.xerces", "org.w3c"}
	patternsRocks = []string{"org.rocksdb."}
	patternsLog   = []string{"org.slf4j", "org.apache.log4j", "org.apache.logging", "org.apache.commons.logging", "ch.qos.logback"}
	pluginDefault = []string{"java.", "scala.", "org.apache.flink.", "javax.annotation.", "org.slf4j", "org.apache.log4j", "org.apache.logging", "org.apache.commons.logging", "ch.qos.logback"}
)

// Version is a Flink major.minor.patch; the zero Version means unknown.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads "1.9.1", "1.19", "2.0-SNAPSHOT", "v1.20.0".
func ParseVersion(s string) (Version, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(s, "-_ "); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return Version{}, false
	}
	var v [3]int
	for i := 0; i < len(parts) && i < 3; i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 {
			return Version{}, false
		}
		v[i] = n
	}
	if v[0] < 1 {
		return Version{}, false
	}
	return Version{v[0], v[1], v[2]}, true
}

func (v Version) String() string {
	if v.Major == 0 {
		return ""
	}
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch)
}

// AtLeast reports v >= major.minor; an unknown version counts as the newest.
func (v Version) AtLeast(major, minor int) bool {
	if v.Major == 0 {
		return true
	}
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// DefaultParentFirst is classloader.parent-first-patterns.default of version v.
func DefaultParentFirst(v Version) []string {
	out := append([]string(nil), patternsBase...)
	if v.AtLeast(1, 10) {
		out = append(out, patternsXML...)
	}
	if v.AtLeast(1, 14) {
		out = append(out, patternsRocks...)
	}
	return append(out, patternsLog...)
}

// DefaultPluginParentFirst is plugin.classloader.parent-first-patterns.default.
func DefaultPluginParentFirst(Version) []string { return append([]string(nil), pluginDefault...) }

// Module is a known artifact, recognised by its package prefixes.
type Module struct {
	Name     string   // Maven artifact without Scala suffix, e.g. flink-table-planner
	Packages []string // package prefixes with a trailing dot
	// Plugin: a file system or metric reporter Flink loads from plugins/ (or lib/), never from
	// the job jar.
	Plugin string // "file system" or "metric reporter"; "" for others
	// Provided: part of what a Flink distribution ships in lib/ (flink-dist, table jars): a job
	// must declare it <scope>provided</scope>.
	Provided bool
}

// modules are ordered by specificity: the first match by longest prefix wins.
var modules = []Module{
	{Name: "flink-s3-fs-hadoop", Packages: []string{"org.apache.flink.fs.s3hadoop."}, Plugin: "file system"},
	{Name: "flink-s3-fs-presto", Packages: []string{"org.apache.flink.fs.s3presto."}, Plugin: "file system"},
	{Name: "flink-s3-fs-base", Packages: []string{"org.apache.flink.fs.s3.", "org.apache.flink.fs.s3base."}, Plugin: "file system"},
	{Name: "flink-hadoop-fs (shaded in the file system plugins)", Packages: []string{"org.apache.flink.fs.shaded.", "org.apache.flink.runtime.fs.hdfs."}, Plugin: "file system"},
	{Name: "flink-azure-fs-hadoop", Packages: []string{"org.apache.flink.fs.azurefs."}, Plugin: "file system"},
	{Name: "flink-gs-fs-hadoop", Packages: []string{"org.apache.flink.fs.gs."}, Plugin: "file system"},
	{Name: "flink-oss-fs-hadoop", Packages: []string{"org.apache.flink.fs.osshadoop."}, Plugin: "file system"},
	{Name: "flink-swift-fs-hadoop", Packages: []string{"org.apache.flink.fs.openstackhadoop."}, Plugin: "file system"},
	{Name: "flink-metrics-prometheus", Packages: []string{"org.apache.flink.metrics.prometheus."}, Plugin: "metric reporter"},
	{Name: "flink-metrics-datadog", Packages: []string{"org.apache.flink.metrics.datadog."}, Plugin: "metric reporter"},
	{Name: "flink-metrics-influxdb", Packages: []string{"org.apache.flink.metrics.influxdb."}, Plugin: "metric reporter"},
	{Name: "flink-metrics-graphite", Packages: []string{"org.apache.flink.metrics.graphite."}, Plugin: "metric reporter"},
	{Name: "flink-metrics-statsd", Packages: []string{"org.apache.flink.metrics.statsd."}, Plugin: "metric reporter"},
	{Name: "flink-metrics-slf4j", Packages: []string{"org.apache.flink.metrics.slf4j."}, Plugin: "metric reporter"},
	{Name: "flink-table-planner", Packages: []string{"org.apache.flink.table.planner.", "org.apache.flink.table.plan.", "org.apache.flink.table.runtime.", "org.apache.flink.table.codegen."}, Provided: true},
	{Name: "flink-table-api-scala-bridge", Packages: []string{"org.apache.flink.table.api.scala.", "org.apache.flink.table.api.bridge.scala."}, Provided: true},
	{Name: "flink-table-api-java-bridge", Packages: []string{"org.apache.flink.table.api.java.", "org.apache.flink.table.api.bridge.java."}, Provided: true},
	{Name: "flink-table-api-java", Packages: []string{"org.apache.flink.table."}, Provided: true},
	{Name: "flink-container", Packages: []string{"org.apache.flink.container."}, Provided: true},
	{Name: "flink-cep", Packages: []string{"org.apache.flink.cep."}},
	{Name: "flink-connector-kafka", Packages: []string{"org.apache.flink.streaming.connectors.kafka.", "org.apache.flink.connector.kafka."}},
	{Name: "flink-statebackend-rocksdb", Packages: []string{"org.apache.flink.contrib.streaming.state.", "org.apache.flink.state.rocksdb."}, Provided: true},
	{Name: "flink-streaming-scala", Packages: []string{"org.apache.flink.streaming.api.scala."}, Provided: true},
	{Name: "flink-streaming-java", Packages: []string{"org.apache.flink.streaming."}, Provided: true},
	{Name: "flink-scala", Packages: []string{"org.apache.flink.api.scala."}, Provided: true},
	{Name: "flink-java", Packages: []string{"org.apache.flink.api.java."}, Provided: true},
	{Name: "flink-clients", Packages: []string{"org.apache.flink.client."}, Provided: true},
	{Name: "flink-runtime", Packages: []string{"org.apache.flink.runtime."}, Provided: true},
	{Name: "flink-shaded", Packages: []string{"org.apache.flink.shaded."}, Provided: true},
	{Name: "flink-core", Packages: []string{"org.apache.flink.api.common.", "org.apache.flink.core.", "org.apache.flink.configuration.", "org.apache.flink.util.", "org.apache.flink.types.", "org.apache.flink.api.", "org.apache.flink.metrics."}, Provided: true},
	{Name: "kafka-clients", Packages: []string{"org.apache.kafka."}},
	{Name: "scala-library", Packages: []string{"scala."}},
	{Name: "hadoop", Packages: []string{"org.apache.hadoop."}},
	{Name: "kryo", Packages: []string{"com.esotericsoftware.kryo."}},
}

// ModuleOf returns the known module a class belongs to, by longest package prefix, or nil.
func ModuleOf(class string) *Module {
	var best *Module
	bestLen := 0
	for i := range modules {
		for _, p := range modules[i].Packages {
			if len(p) > bestLen && strings.HasPrefix(class, p) {
				best, bestLen = &modules[i], len(p)
			}
		}
	}
	if best == nil && strings.HasPrefix(class, "org.apache.flink.") {
		return &otherFlink
	}
	return best
}

var otherFlink = Module{Name: "flink (other modules)", Packages: []string{"org.apache.flink."}}

// scalaSuffix returns "2.12" for an artifact "flink-table-planner_2.12", else "".
func scalaSuffix(artifact string) string {
	i := strings.LastIndex(artifact, "_2.")
	if i < 0 {
		return ""
	}
	s := artifact[i+1:]
	if v, ok := ParseVersion(s); ok && v.Major == 2 && v.Minor >= 10 {
		return s
	}
	return ""
}

// scalaBinary turns "2.12.7" into "2.12".
func scalaBinary(full string) string {
	parts := strings.SplitN(full, ".", 3)
	if len(parts) < 2 {
		return ""
	}
	return parts[0] + "." + parts[1]
}

// javaRelease of a class file major version.
func javaRelease(major uint16) int {
	if major < 46 {
		return 0
	}
	return int(major) - 44
}
