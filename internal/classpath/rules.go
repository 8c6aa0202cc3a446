package classpath

import "github.com/flinkpreflight/preflight/internal/findings"

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

// rules documents the classpath rules in ID order; the remedies are the general case, each
// finding names the jars, modules and versions involved.
var rules = []findings.RuleMeta{
	{ID: RuleDuplicateReferenced, Title: "Class loaded twice: in the job jar and on Flink's class path, and Flink's side uses it", Severity: findings.Error,
		Cause:      "A class in the job jar that is also on the parent class path (lib/) and not covered by a parent-first pattern is loaded child-first from the job jar for user code, while classes loaded by the parent loader (Flink classes matching org.apache.flink., or lib/ classes the job jar lacks) link against lib/'s copy. The constant pools of those parent classes reference it, so objects cross between the two copies: LinkageError (loader constraint violation) or ClassCastException \"X cannot be cast to X\".",
		Remedies:   []findings.Remedy{{Text: "Keep one copy of the library: remove it from lib/ and ship it only in the job jar, exclude it from the job jar (Maven <scope>provided</scope>, Gradle compileOnly), or relocate it in the job jar with the shade plugin. Switching classloader.resolve-order to parent-first only hides this (see PF308)."}},
		References: []string{refClassloading, "FLINK-7442"}},
	{ID: RuleDuplicate, Title: "Class in both the job jar and Flink's class path (child-first)", Severity: findings.Warning,
		Cause:      "Same as PF301, but no parent-loaded class references the duplicated classes: two copies live in one JVM and break only when an object crosses loaders (reflection, ServiceLoader, serialization by name). WARNING when the copies differ in bytes (different versions), INFO when identical.",
		Remedies:   []findings.Remedy{{Text: "Remove the duplicate: exclude the library from the job jar (provided scope) if lib/'s version suits the job, or remove it from lib/ if only jobs use it."}},
		References: []string{refClassloading}},
	{ID: RuleProvidedBundled, Title: "Flink modules the cluster provides are bundled in the job jar", Severity: findings.Warning,
		Cause:      "Classes matching a parent-first pattern (org.apache.flink., scala., ...) always come from the parent class path when it has them: the job jar's copies are dead weight, and its other classes (bundled dependencies of those modules) then mix with the cluster's version of the module.",
		Remedies:   []findings.Remedy{{Text: "Declare the Flink modules with <scope>provided</scope> (Gradle compileOnly) so they are not shaded into the job jar, and build against the cluster's Flink version."}},
		References: []string{refDependencies, refClassloading}},
	{ID: RuleFlinkModuleBundled, Title: "Flink module bundled that the cluster does not provide", Severity: findings.Warning,
		Cause:      "Parent-first classes that the parent class path lacks fall back to the job jar: this is how connectors and libraries such as flink-cep are meant to ship, but they must be built for the cluster's Flink version.",
		Remedies:   []findings.Remedy{{Text: "Build the job against the cluster's Flink version, keeping the bundled module's version equal to the cluster's."}},
		References: []string{refDependencies}},
	{ID: RulePluginBundled, Title: "File system or metric reporter bundled in the job jar", Severity: findings.Warning,
		Cause:      "Flink creates file systems and metric reporters once per process from lib/ and plugins/ (one class loader per plugin folder) before any job is loaded. A copy in the job jar never serves the cluster's s3:// checkpoints or reporters; it only adds a second shaded Hadoop/AWS SDK to the job.",
		Remedies:   []findings.Remedy{{Text: "Remove the file system or reporter from the job's dependencies (or <scope>provided</scope>) and install it on the cluster as a plugin under plugins/ (copied from opt/)."}},
		References: []string{refPlugins}},
	{ID: RuleScalaMismatch, Title: "Scala binary version of the job differs from the cluster's", Severity: findings.Error,
		Cause:      "Scala 2.11, 2.12 and 2.13 are binary incompatible and scala.* is always loaded parent-first: a job built for another Scala binary version fails with NoSuchMethodError, AbstractMethodError or ClassNotFoundException.",
		Remedies:   []findings.Remedy{{Text: "Build every Scala-suffixed dependency with the cluster's Scala binary version, and keep scala-library out of the job jar (provided)."}},
		References: []string{refDependencies, "FLINK-8264"}},
	{ID: RuleJavaVersion, Title: "Class files compiled for a newer Java than the cluster runs", Severity: findings.Error,
		Cause:      "A class file major version above the JVM's makes loading fail with UnsupportedClassVersionError.",
		Remedies:   []findings.Remedy{{Text: "Compile with --release set to the cluster's Java version (maven.compiler.release) and use dependency versions that support it, or run the cluster on a newer Java."}},
		References: []string{"https://docs.oracle.com/javase/specs/jvms/se21/html/jvms-4.html#jvms-4.1"}},
	{ID: RuleResolveOrder, Title: "What classloader.resolve-order changes here", Severity: findings.Info,
		Cause:      "parent-first makes the parent class path win for every class, which hides PF301/PF302 conflicts at the price of silently running the job against lib/'s versions of everything both sides have.",
		Remedies:   []findings.Remedy{{Text: "Fix the duplicate (PF301/PF302) instead of changing the resolve order; if a library must stay in lib/, add only its packages to classloader.parent-first-patterns.additional."}},
		References: []string{refConfig, refClassloading}},
	{ID: RuleNestedJars, Title: "Jars inside the job jar are not loaded", Severity: findings.Warning,
		Cause:      "Flink's user-code class loader is a URLClassLoader over the job jar: jars nested inside it (lib/*.jar, BOOT-INF/lib) are not on the class path.",
		Remedies:   []findings.Remedy{{Text: "Build an uber jar with the shade plugin (or Gradle shadow) so dependencies are unpacked into the jar, or pass extra jars with -C/--classpath or pipeline.classpaths."}},
		References: []string{refDependencies}},
	{ID: RuleSignedJar, Title: "Signature files in the job jar", Severity: findings.Error,
		Cause:      "The JVM verifies a jar that has META-INF/*.SF files. An uber jar that kept a signed dependency's signature files has a manifest that no longer matches: opening it fails with SecurityException \"Invalid signature file digest for Manifest main attributes\".",
		Remedies:   []findings.Remedy{{Text: "Exclude META-INF/*.SF, META-INF/*.DSA, META-INF/*.RSA and META-INF/*.EC in the shade plugin's <filters> (artifact *:*), or sign the final jar yourself."}},
		References: []string{"https://maven.apache.org/plugins/maven-shade-plugin/examples/includes-excludes.html"}},
}

func init() { findings.RegisterDoc(rules...) }

func ruleByID(id string) findings.RuleMeta {
	for _, r := range rules {
		if r.ID == id {
			return r
		}
	}
	return findings.RuleMeta{ID: id}
}
