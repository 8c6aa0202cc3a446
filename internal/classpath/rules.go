package classpath

import "github.com/flinkpreflight/preflight/internal/findings"

// Rule describes one PF3xx rule: stable ID, title, highest severity, what it checks, and the
// references behind it.
type Rule struct {
	ID          string
	Title       string
	Severity    findings.Severity
	Explanation string
	References  []string
}

// Rule IDs; stable, never reused.
const (
	RuleDuplicateReferenced = "PF301"
	RuleDuplicate           = "PF302"
	RuleProvidedBundled     = "PF303"
	RuleFlinkModuleBundled  = "PF304"
	RulePluginBundled       = "PF305"
	RuleScalaMismatch       = "PF306"
	RuleJavaVersion         = "PF307"
	RuleResolveOrder        = "PF308"
	RuleNestedJars          = "PF309"
	RuleSignedJar           = "PF310"
)

const (
	refClassloading = "https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/debugging/debugging_classloading/"
	refDependencies = "https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/configuration/overview/"
	refPlugins      = "https://nightlies.apache.org/flink/flink-docs-stable/docs/deployment/filesystems/plugins/"
	refConfig       = "https://nightlies.apache.org/flink/flink-docs-stable/docs/deployment/config/#classloader-resolve-order"
)

// Rules lists the classpath rules in ID order.
func Rules() []Rule {
	return []Rule{
		{RuleDuplicateReferenced, "Class loaded twice: in the job jar and on Flink's class path, and Flink's side uses it", findings.Error,
			"A class in the job jar that is also on the parent class path (lib/) and not covered by a parent-first pattern is loaded child-first from the job jar for user code, while classes loaded by the parent loader (Flink classes matching org.apache.flink., or lib/ classes the job jar lacks) link against lib/'s copy. The constant pools of those parent classes reference it, so objects cross between the two copies: LinkageError (loader constraint violation) or ClassCastException \"X cannot be cast to X\".",
			[]string{refClassloading, "FLINK-7442"}},
		{RuleDuplicate, "Class in both the job jar and Flink's class path (child-first)", findings.Warning,
			"Same as PF301, but no parent-loaded class references the duplicated classes: two copies live in one JVM and break only when an object crosses loaders (reflection, ServiceLoader, serialization by name). WARNING when the copies differ in bytes (different versions), INFO when identical.",
			[]string{refClassloading}},
		{RuleProvidedBundled, "Flink modules the cluster provides are bundled in the job jar", findings.Warning,
			"Classes matching a parent-first pattern (org.apache.flink., scala., ...) always come from the parent class path when it has them: the job jar's copies are dead weight, and its other classes (bundled dependencies of those modules) then mix with the cluster's version of the module.",
			[]string{refDependencies, refClassloading}},
		{RuleFlinkModuleBundled, "Flink module bundled that the cluster does not provide", findings.Warning,
			"Parent-first classes that the parent class path lacks fall back to the job jar: this is how connectors and libraries such as flink-cep are meant to ship, but they must be built for the cluster's Flink version.",
			[]string{refDependencies}},
		{RulePluginBundled, "File system or metric reporter bundled in the job jar", findings.Warning,
			"Flink creates file systems and metric reporters once per process from lib/ and plugins/ (one class loader per plugin folder) before any job is loaded. A copy in the job jar never serves the cluster's s3:// checkpoints or reporters; it only adds a second shaded Hadoop/AWS SDK to the job.",
			[]string{refPlugins}},
		{RuleScalaMismatch, "Scala binary version of the job differs from the cluster's", findings.Error,
			"Scala 2.11, 2.12 and 2.13 are binary incompatible and scala.* is always loaded parent-first: a job built for another Scala binary version fails with NoSuchMethodError, AbstractMethodError or ClassNotFoundException.",
			[]string{refDependencies, "FLINK-8264"}},
		{RuleJavaVersion, "Class files compiled for a newer Java than the cluster runs", findings.Error,
			"A class file major version above the JVM's makes loading fail with UnsupportedClassVersionError.",
			[]string{"https://docs.oracle.com/javase/specs/jvms/se21/html/jvms-4.html#jvms-4.1"}},
		{RuleResolveOrder, "What classloader.resolve-order changes here", findings.Info,
			"parent-first makes the parent class path win for every class, which hides PF301/PF302 conflicts at the price of silently running the job against lib/'s versions of everything both sides have.",
			[]string{refConfig, refClassloading}},
		{RuleNestedJars, "Jars inside the job jar are not loaded", findings.Warning,
			"Flink's user-code class loader is a URLClassLoader over the job jar: jars nested inside it (lib/*.jar, BOOT-INF/lib) are not on the class path.",
			[]string{refDependencies}},
		{RuleSignedJar, "Signature files in the job jar", findings.Error,
			"The JVM verifies a jar that has META-INF/*.SF files. An uber jar that kept a signed dependency's signature files has a manifest that no longer matches: opening it fails with SecurityException \"Invalid signature file digest for Manifest main attributes\".",
			[]string{"https://maven.apache.org/plugins/maven-shade-plugin/examples/includes-excludes.html"}},
	}
}

func ruleByID(id string) Rule {
	for _, r := range Rules() {
		if r.ID == id {
			return r
		}
	}
	return Rule{ID: id}
}
