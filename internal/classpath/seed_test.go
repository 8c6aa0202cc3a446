package classpath

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/classpath/classpathtest"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/jarindex/jartest"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Names of the seed incident, from classpathtest.
const (
	producerRecord     = classpathtest.ProducerRecord
	flinkKafkaProducer = classpathtest.FlinkKafkaProducer
	streamEnvironment  = classpathtest.StreamEnvironment
)

func seedCluster(t *testing.T) (lib, plugins string) {
	t.Helper()
	lib, plugins, err := classpathtest.SeedCluster(t.TempDir())
	must(t, err)
	return lib, plugins
}

func seedJobJar(t *testing.T, dir string) string {
	t.Helper()
	p, err := classpathtest.SeedJobJar(dir)
	must(t, err)
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func findingsByRule(r *pb.ClasspathReport) map[string][]*pb.Finding {
	out := map[string][]*pb.Finding{}
	for _, f := range r.GetFindings() {
		out[f.GetRuleId()] = append(out[f.GetRuleId()], f)
	}
	return out
}

// TestSeedIncident reproduces the third incident: DENY, naming ProducerRecord (referenced by the
// parent-loaded FlinkKafkaProducer), the bundled Flink modules and the bundled S3 file system,
// each with a fix.
func TestSeedIncident(t *testing.T) {
	lib, plugins := seedCluster(t)
	job := seedJobJar(t, t.TempDir())
	rep, err := Check(context.Background(), Input{JobJar: job, Lib: lib, Plugins: plugins})
	if err != nil {
		t.Fatal(err)
	}
	if rep.GetVerdict() != pb.Verdict_VERDICT_DENY {
		t.Errorf("verdict %v, want DENY", rep.GetVerdict())
	}
	if got := rep.GetCluster().GetFlinkVersion(); got != "1.9.1" || rep.GetCluster().GetScalaVersion() != "2.12" || rep.GetCluster().GetResolveOrder() != "child-first" {
		t.Errorf("cluster %v", rep.GetCluster())
	}
	by := findingsByRule(rep)
	for _, tc := range []struct {
		rule     string
		severity pb.Severity
		contains []string
	}{
		{RuleDuplicateReferenced, pb.Severity_SEVERITY_ERROR, []string{producerRecord, "hands a ProducerRecord", "org.apache.kafka.clients.producer", flinkKafkaProducer, "lib/kafka-clients-2.2.0.jar", "LinkageError"}},
		{RuleProvidedBundled, pb.Severity_SEVERITY_WARNING, []string{"flink-table-planner", "flink-table-api-scala-bridge", "flink-container", "provided", "flink-table-planner_2.12:1.9.1"}},
		{RuleProvidedBundled, pb.Severity_SEVERITY_WARNING, []string{"flink-connector-kafka", "lib/flink-connector-kafka_2.12-1.9.1.jar"}},
		{RulePluginBundled, pb.Severity_SEVERITY_WARNING, []string{"flink-s3-fs-hadoop", "2 classes in org.apache.flink.fs.s3base.shaded.com.amazonaws.services.s3, org.apache.flink.fs.s3hadoop", "plugins/s3-fs-hadoop/flink-s3-fs-hadoop-1.9.1.jar", "plugins/s3-fs-hadoop/"}},
		{RuleFlinkModuleBundled, pb.Severity_SEVERITY_INFO, []string{"flink-cep", "org.apache.flink.cep"}},
		{RuleResolveOrder, pb.Severity_SEVERITY_INFO, []string{"parent-first", "appears to fix it"}},
	} {
		var hit *pb.Finding
		for _, f := range by[tc.rule] {
			text := f.GetMessage() + " " + f.GetRemediation()
			ok := true
			for _, s := range tc.contains {
				ok = ok && strings.Contains(text, s)
			}
			if ok {
				hit = f
			}
		}
		if hit == nil {
			t.Errorf("%s: no finding containing %q; got %v", tc.rule, tc.contains, by[tc.rule])
			continue
		}
		if hit.GetSeverity() != tc.severity || hit.GetRemediation() == "" || len(hit.GetReferences()) == 0 {
			t.Errorf("%s: severity %v (want %v), fix %q, refs %v", tc.rule, hit.GetSeverity(), tc.severity, hit.GetRemediation(), hit.GetReferences())
		}
	}
	if len(rep.GetDetails()) != len(rep.GetFindings()) {
		t.Errorf("%d details for %d findings", len(rep.GetDetails()), len(rep.GetFindings()))
	}
	if t.Failed() {
		for _, f := range rep.GetFindings() {
			t.Logf("%s %s: %s\nFix: %s", f.GetSeverity(), f.GetRuleId(), f.GetMessage(), f.GetRemediation())
		}
	}
}

// TestSeedParentFirst: the seed's workaround. With resolve-order parent-first the LinkageError
// finding disappears (one copy of ProducerRecord for both sides), and PF308 says what it costs.
func TestSeedParentFirst(t *testing.T) {
	lib, plugins := seedCluster(t)
	dir := t.TempDir()
	job := seedJobJar(t, dir)
	conf := filepath.Join(dir, "flink-conf.yaml")
	must(t, os.WriteFile(conf, []byte("# the seed's workaround\nclassloader.resolve-order: parent-first\ntaskmanager.numberOfTaskSlots: 4\n"), 0o644))
	rep, err := Check(context.Background(), Input{JobJar: job, Lib: lib, Plugins: plugins, ConfFile: conf})
	if err != nil {
		t.Fatal(err)
	}
	by := findingsByRule(rep)
	if len(by[RuleDuplicateReferenced]) != 0 || len(by[RuleDuplicate]) != 0 {
		t.Errorf("parent-first still reports duplicates: %v", by)
	}
	if len(by[RuleResolveOrder]) != 1 || !strings.Contains(by[RuleResolveOrder][0].GetMessage(), "never loaded from the job jar") {
		t.Errorf("PF308: %v", by[RuleResolveOrder])
	}
	if rep.GetVerdict() != pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS || rep.GetCluster().GetResolveOrder() != "parent-first" {
		t.Errorf("verdict %v, order %s", rep.GetVerdict(), rep.GetCluster().GetResolveOrder())
	}
}

// TestCleanJob: the job's own classes and a dependency the cluster lacks → ALLOW, no finding.
func TestCleanJob(t *testing.T) {
	lib, plugins := seedCluster(t)
	p := filepath.Join(t.TempDir(), "clean.jar")
	must(t, jartest.WriteJar(p, jartest.Jar{}.AddClasses(
		jartest.Class{Name: "com.example.orders.OrdersJob", Refs: []string{streamEnvironment}},
		jartest.Class{Name: "com.google.gson.Gson"},
	).AddPom("com.google.code.gson", "gson", "2.10")))
	rep, err := Check(context.Background(), Input{JobJar: p, Lib: lib, Plugins: plugins, JavaVersion: 8})
	if err != nil {
		t.Fatal(err)
	}
	if rep.GetVerdict() != pb.Verdict_VERDICT_ALLOW || len(rep.GetFindings()) != 0 {
		t.Fatalf("verdict %v, findings %v", rep.GetVerdict(), rep.GetFindings())
	}
}

func TestRules(t *testing.T) {
	lib, plugins := seedCluster(t)
	type jobFn func(dir string) string
	jar := func(j jartest.Jar) jobFn {
		return func(dir string) string {
			p := filepath.Join(dir, "job.jar")
			must(t, jartest.WriteJar(p, j))
			return p
		}
	}
	signed := jartest.Jar{}.AddClasses(jartest.Class{Name: "com.example.A"})
	signed["META-INF/BCKEY.SF"] = []byte("Signature-Version: 1.0\r\nSHA-256-Digest-Manifest: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\nCreated-By: 1.8.0\r\n\r\n")
	signed["META-INF/BCKEY.RSA"] = []byte{1, 2, 3}
	for _, tc := range []struct {
		name     string
		job      jobFn
		in       Input
		conf     string // file name and content "name\ncontent"
		rule     string
		severity pb.Severity
		contains string
		verdict  pb.Verdict
	}{
		{name: "scala mismatch", job: jar(jartest.Jar{}.AddClasses(jartest.Class{Name: "com.example.A"}).AddPom("org.apache.flink", "flink-streaming-scala_2.11", "1.9.1")),
			rule: RuleScalaMismatch, severity: pb.Severity_SEVERITY_ERROR, contains: "Scala 2.11: flink-streaming-scala_2.11:1.9.1", verdict: pb.Verdict_VERDICT_DENY},
		{name: "java too new", job: jar(jartest.Jar{}.AddClasses(jartest.Class{Name: "com.example.A", Major: 61}, jartest.Class{Name: "com.example.B"})), in: Input{JavaVersion: 11},
			rule: RuleJavaVersion, severity: pb.Severity_SEVERITY_ERROR, contains: "1 for Java 17 (class file version 61): com.example", verdict: pb.Verdict_VERDICT_DENY},
		{name: "java ok", job: jar(jartest.Jar{}.AddClasses(jartest.Class{Name: "com.example.A", Major: 55})), in: Input{JavaVersion: 11}, verdict: pb.Verdict_VERDICT_ALLOW},
		{name: "nested jar", job: jar(jartest.Jar{"lib/guava-31.jar": []byte("PK")}.AddClasses(jartest.Class{Name: "com.example.A"})),
			rule: RuleNestedJars, severity: pb.Severity_SEVERITY_WARNING, contains: "lib/guava-31.jar", verdict: pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS},
		{name: "broken signature", job: jar(signed), rule: RuleSignedJar, severity: pb.Severity_SEVERITY_ERROR, contains: "META-INF/BCKEY.SF", verdict: pb.Verdict_VERDICT_DENY},
		{name: "unreferenced identical duplicate", job: jar(jartest.Jar{}.AddClasses(jartest.Class{Name: "org.apache.kafka.common.serialization.ByteArraySerializer"})),
			rule: RuleDuplicate, severity: pb.Severity_SEVERITY_INFO, contains: "identical bytes", verdict: pb.Verdict_VERDICT_ALLOW},
		{name: "unreferenced differing duplicate", job: jar(jartest.Jar{}.AddClasses(jartest.Class{Name: "org.apache.kafka.common.serialization.ByteArraySerializer", Salt: "2.8.0"})),
			rule: RuleDuplicate, severity: pb.Severity_SEVERITY_WARNING, contains: "1 of them differ in bytes", verdict: pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS},
		{name: "fail on warning", job: jar(jartest.Jar{}.AddClasses(jartest.Class{Name: "org.apache.kafka.common.serialization.ByteArraySerializer", Salt: "2.8.0"})), in: Input{FailLevel: findings.Warning},
			rule: RuleDuplicate, severity: pb.Severity_SEVERITY_WARNING, contains: "differ", verdict: pb.Verdict_VERDICT_DENY},
		{name: "additional pattern (config.yaml, 1.19 nested YAML) makes kafka parent-first",
			job:  func(dir string) string { return seedJobJar(t, dir) },
			conf: "config.yaml\nclassloader:\n  parent-first-patterns:\n    additional:\n      - org.apache.kafka.\n",
			rule: RuleProvidedBundled, severity: pb.Severity_SEVERITY_WARNING, contains: "kafka-clients: 4 classes", verdict: pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS},
		{name: "newer connector version than the cluster", job: jar(jartest.Jar{}.AddClasses(jartest.Class{Name: "org.apache.flink.cep.CEP"}).AddPom("org.apache.flink", "flink-cep_2.12", "1.10.0")),
			rule: RuleFlinkModuleBundled, severity: pb.Severity_SEVERITY_WARNING, contains: "built for Flink 1.10", verdict: pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := tc.in
			in.JobJar, in.Lib, in.Plugins = tc.job(dir), lib, plugins
			if tc.conf != "" {
				name, content, _ := strings.Cut(tc.conf, "\n")
				in.ConfFile = filepath.Join(dir, name)
				must(t, os.WriteFile(in.ConfFile, []byte(content), 0o644))
			}
			rep, err := Check(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if rep.GetVerdict() != tc.verdict {
				t.Errorf("verdict %v, want %v", rep.GetVerdict(), tc.verdict)
			}
			if tc.rule == "" {
				if len(rep.GetFindings()) != 0 {
					t.Errorf("findings %v", rep.GetFindings())
				}
				return
			}
			for _, f := range findingsByRule(rep)[tc.rule] {
				if f.GetSeverity() == tc.severity && strings.Contains(f.GetMessage(), tc.contains) {
					return
				}
			}
			t.Errorf("no %s %v finding containing %q in %v", tc.rule, tc.severity, tc.contains, rep.GetFindings())
		})
	}
}

func TestInputErrors(t *testing.T) {
	lib, _ := seedCluster(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jar")
	must(t, os.WriteFile(bad, []byte("not a zip at all, just text"), 0o644))
	badConf := filepath.Join(dir, "config.yaml")
	must(t, os.WriteFile(badConf, []byte("classloader: [unclosed\n"), 0o644))
	good := seedJobJar(t, dir)
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{"missing job jar", Input{JobJar: filepath.Join(dir, "nope.jar"), Lib: lib}, "nope.jar"},
		{"not a jar", Input{JobJar: bad, Lib: lib}, "no end of central directory"},
		{"missing lib", Input{JobJar: good, Lib: filepath.Join(dir, "nolib")}, "nolib"},
		{"bad yaml", Input{JobJar: good, Lib: lib, ConfFile: badConf}, "not valid YAML"},
		{"bad version", Input{JobJar: good, Lib: lib, FlinkVersion: "banana"}, "not a Flink version"},
		{"no lib", Input{JobJar: good}, "lib"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(context.Background(), tc.in)
			var ie *InputError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !asInputError(err, &ie) {
				t.Fatalf("error %v, want an InputError containing %q", err, tc.want)
			}
		})
	}
}
