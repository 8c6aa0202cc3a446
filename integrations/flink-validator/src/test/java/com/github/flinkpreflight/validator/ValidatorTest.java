package com.github.flinkpreflight.validator;

import static com.github.flinkpreflight.testing.Checks.check;
import static com.github.flinkpreflight.testing.Checks.contains;
import static com.github.flinkpreflight.testing.Checks.eq;
import static com.github.flinkpreflight.validator.TestSupport.conf;

import com.github.flinkpreflight.testing.Checks;
import com.github.flinkpreflight.testing.FakeService.Answer;
import com.github.flinkpreflight.testing.FakeService;
import com.github.flinkpreflight.testing.LogCapture;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.kubernetes.operator.api.FlinkDeployment;
import org.apache.flink.kubernetes.operator.api.FlinkStateSnapshot;

import java.net.ServerSocket;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.jar.JarFile;
import java.util.logging.LogManager;

/**
 * The validator against a JDK HttpServer standing in for preflightd: how it is found and loaded,
 * its options, the request it sends, and how it maps every answer and failure.
 *
 * <p>Run: {@code java -cp ... ValidatorTest JAR REPO_ROOT}.
 */
public final class ValidatorTest {

    static Path jar;
    static String repo;

    static final String DENIED =
            "{\"allowed\":false,\"code\":403,\"message\":\"Preflight denied the parallelism change of FlinkDeployment"
                    + " flink/compact-sink: ...\\n- vertex \\\"compact-operator\\\": 4 -> 8: PF101 (FLINK-31689). Nearest safe"
                    + " parallelism: keep 4.\",\"warnings\":[\"Preflight: read savepoint 1742\"]}";
    static final String ALLOWED =
            "{\"allowed\":true,\"message\":\"Preflight allowed the parallelism change of FlinkDeployment flink/compact-sink\"}";

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ValidatorTest JAR REPO_ROOT");
            System.exit(2);
        }
        LogManager.getLogManager().reset();
        jar = Paths.get(args[0]);
        repo = args[1];
        Map<String, Checks.Body> t = new LinkedHashMap<>();
        t.put("ServiceLoaderFindsBothPackages", ValidatorTest::serviceLoader);
        t.put("JarShipsNoOperatorClass", ValidatorTest::jarContents);
        t.put("Options", ValidatorTest::options);
        t.put("BadOptionsFollowPolicy", ValidatorTest::badOptions);
        t.put("RequestShape", ValidatorTest::requestShape);
        t.put("AllowedAndDenied", ValidatorTest::allowedAndDenied);
        t.put("UnchangedSpecNoCall", ValidatorTest::unchangedSpec);
        t.put("UnchangedSpecForms", ValidatorTest::unchangedSpecForms);
        t.put("FailuresFollowPolicy", ValidatorTest::failures);
        t.put("TimeoutBoundsTheCall", ValidatorTest::timeout);
        t.put("MapperFailureFollowsPolicy", ValidatorTest::mapperFailure);
        t.put("DryRunAllows", ValidatorTest::dryRun);
        t.put("SessionJobAndSnapshot", ValidatorTest::sessionJobAndSnapshot);
        System.exit(Checks.runAll("ValidatorTest", t) == 0 ? 0 : 1);
    }

    static PreflightValidator validator(Map<String, String> c) {
        PreflightValidator v = new PreflightValidator();
        v.configure(() -> c);
        return v;
    }

    static FlinkDeployment overrides() throws Exception {
        return TestResources.deployment(TestSupport.fixture(repo, "deployment-overrides-4-to-8.json"));
    }

    /**
     * Both service files resolve, through a class loader shaped like a released operator's plugin
     * loader (only org.apache.flink from the host), and the loaded plugin serializes through the
     * resource's class loader and calls preflightd.
     */
    static void serviceLoader() throws Exception {
        String[] ifaces = {
            "org.apache.flink.kubernetes.operator.validation.FlinkResourceValidator",
            "org.apache.flink.kubernetes.operator.api.validation.FlinkResourceValidator",
        };
        String[] impls = {ReleasedOperatorValidator.class.getName(), MainOperatorValidator.class.getName()};
        try (FakeService svc = new FakeService(); URLClassLoader loader = TestSupport.pluginLoader(jar)) {
            svc.answer = s -> Answer.ok(DENIED);
            check(!canLoad(loader, ResourceJson.MAPPER_CLASS), "the plugin loader hides Jackson, as a released operator's does");
            for (int i = 0; i < ifaces.length; i++) {
                Class<?> iface = Class.forName(ifaces[i]);
                Iterator<?> it = ServiceLoader.load(iface, loader).iterator();
                check(it.hasNext(), "no " + ifaces[i] + " service in the jar");
                Object plugin = it.next();
                eq(plugin.getClass().getName(), impls[i], "implementation of " + ifaces[i]);
                check(plugin.getClass().getClassLoader() == loader, "loaded by the plugin loader");
                check(!it.hasNext(), "one service per interface");
                iface.getMethod("configure", Configuration.class).invoke(plugin, Configuration.fromMap(conf("url", svc.url())));
                Object out = iface.getMethod("validateDeployment", FlinkDeployment.class).invoke(plugin, overrides());
                check(out instanceof Optional && ((Optional<?>) out).isPresent(), ifaces[i] + ": the denial comes back: " + out);
                contains((String) ((Optional<?>) out).get(), "keep 4", "the message");
            }
            eq(svc.seen.size(), 2, "one call per plugin");
        }
    }

    static boolean canLoad(ClassLoader l, String name) {
        try {
            l.loadClass(name);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    static void jarContents() throws Exception {
        List<String> foreign = new ArrayList<>();
        try (JarFile j = new JarFile(jar.toFile())) {
            j.stream().forEach(e -> {
                String n = e.getName();
                boolean dir = n.endsWith("/") && "com/github/flinkpreflight/validator/".startsWith(n);
                if (!(dir || n.startsWith("com/github/flinkpreflight/validator/") || n.startsWith("META-INF/"))) {
                    foreign.add(n);
                }
            });
            check(j.getEntry("META-INF/services/org.apache.flink.kubernetes.operator.validation.FlinkResourceValidator") != null, "released service file");
            check(j.getEntry("META-INF/services/org.apache.flink.kubernetes.operator.api.validation.FlinkResourceValidator") != null, "main service file");
        }
        eq(foreign, List.of(), "entries outside the plugin's package");
    }

    static void options() throws Exception {
        ValidatorConfig c = ValidatorConfig.parse(conf("url", "http://preflightd:8080"));
        eq(c.failClosed, false, "default on-failure is fail-open");
        eq(c.requestTimeout.toMillis(), 8000L, "default request timeout");
        eq(c.connectTimeout.toMillis(), 2000L, "default connect timeout");
        eq(c.dryRun, false, "dry run");
        c = ValidatorConfig.parse(conf("url", "https://gw/preflight", "on-failure", "fail-closed", "request-timeout", "4 s",
                "connect-timeout", "500 ms", "dry-run", "true"));
        eq(c.failClosed, true, "fail-closed");
        eq(c.requestTimeout.toMillis(), 4000L, "request timeout");
        eq(c.connectTimeout.toMillis(), 500L, "connect timeout");
        eq(c.dryRun, true, "dry run");
        eq(AdmissionClient.endpoint(c).toString(), "https://gw/preflight/v1/admission/flink/resource?onFailure=closed&timeout=3600ms",
                "the route under the URL's path, with the policy and 90% of the timeout");
        String[][] bad = {
            {"url", ""}, {"url", "preflightd:8080"}, {"on-failure", "maybe"}, {"request-timeout", "soon"},
            {"request-timeout", "0 s"}, {"connect-timeout", "3 fortnights"}, {"dry-run", "yes"},
        };
        for (String[] b : bad) {
            Map<String, String> m = conf("url", "http://preflightd:8080");
            m.put(ValidatorConfig.PREFIX + b[0], b[1]);
            try {
                ValidatorConfig.parse(m);
                throw new AssertionError(b[0] + "=" + b[1] + " accepted");
            } catch (ConfigException e) {
                contains(e.getMessage(), ValidatorConfig.PREFIX + b[0], "the error names the key");
            }
        }
    }

    static void badOptions() throws Exception {
        try (LogCapture log = new LogCapture(PreflightValidator.class)) {
            eq(validator(conf()).validate(overrides()), Optional.empty(), "no url, fail-open: allowed");
            contains(log.all(), "'" + ValidatorConfig.PREFIX + "url' is not set", "the reason is logged");
            Optional<String> out = validator(conf("on-failure", "fail-closed")).validate(overrides());
            check(out.isPresent(), "no url, fail-closed: denied");
            contains(out.get(), "'" + ValidatorConfig.PREFIX + "url' is not set", "the denial says why");
            check(validator(conf("url", "http://x", "on-failure", "shut")).validate(overrides()).isPresent(),
                    "an unreadable on-failure means fail-closed");
            PreflightValidator v = new PreflightValidator();
            v.configure(() -> {
                throw new IllegalStateException("no configuration");
            });
            eq(v.validate(overrides()), Optional.empty(), "a configuration that cannot be read: fail-open by default");
        }
    }

    static void requestShape() throws Exception {
        try (FakeService svc = new FakeService()) {
            svc.answer = s -> Answer.ok(ALLOWED);
            FlinkDeployment d = overrides();
            eq(validator(conf("url", svc.url() + "/prefix/", "request-timeout", "8000")).validate(d), Optional.empty(), "allowed");
            eq(svc.seen.size(), 1, "one call");
            FakeService.Seen s = svc.seen.get(0);
            eq(s.method, "POST", "method");
            eq(s.pathAndQuery, "/prefix/v1/admission/flink/resource?onFailure=open&timeout=7200ms", "path and query");
            eq(s.header("Content-Type"), "application/json", "content type");
            check(s.header("X-Request-Id") != null && s.header("X-Request-Id").startsWith("validator-"), "request id");
            eq(s.body, TestResources.jsonOf(d), "the body is the resource as the operator's mapper writes it");
        }
    }

    static void allowedAndDenied() throws Exception {
        try (FakeService svc = new FakeService(); LogCapture log = new LogCapture(PreflightValidator.class)) {
            PreflightValidator v = validator(conf("url", svc.url()));
            svc.answer = s -> Answer.ok(ALLOWED);
            eq(v.validate(overrides()), Optional.empty(), "allowed");
            svc.answer = s -> Answer.ok(DENIED);
            Optional<String> out = v.validate(overrides());
            check(out.isPresent(), "denied");
            contains(out.get(), "PF101 (FLINK-31689)", "preflightd's message, as kubectl shows it");
            contains(log.all(), "WARNING Preflight: read savepoint 1742 [FlinkDeployment flink/compact-sink, request validator-", "warnings logged");
        }
    }

    static void unchangedSpec() throws Exception {
        try (FakeService svc = new FakeService()) {
            svc.answer = s -> Answer.ok(DENIED);
            PreflightValidator v = validator(conf("url", svc.url(), "on-failure", "fail-closed"));
            // The spec of the fixture after the change went through: spec == lastReconciledSpec.
            String json = TestSupport.fixture(repo, "deployment-overrides-4-to-8.json")
                    .replace("0d9ffb4f280d028d86dadba01ac205d7:8", "0d9ffb4f280d028d86dadba01ac205d7:4");
            eq(v.validate(TestResources.deployment(json)), Optional.empty(), "a reconcile of an unchanged spec is allowed");
            eq(svc.seen.size(), 0, "without a call");
            check(v.validate(overrides()).isPresent(), "a changed spec is checked");
            eq(svc.seen.size(), 1, "with a call");
        }
    }

    /** What counts as the last reconciled spec, in the forms operators write it. */
    static void unchangedSpecForms() throws Exception {
        String spec = "{\"job\":{\"parallelism\":4,\"upgradeMode\":\"savepoint\"},\"image\":\"flink:1.20\"}";
        Map<String, Boolean> cases = new LinkedHashMap<>();
        cases.put("{\"spec\":" + spec + ",\"resource_metadata\":{\"apiVersion\":\"flink.apache.org/v1beta1\"}}", true);
        cases.put("{\"spec\":{\"job\":{\"parallelism\":8,\"upgradeMode\":\"savepoint\"},\"image\":\"flink:1.20\"}}", false);
        cases.put(spec, true); // the older format, the bare spec (SpecUtils still reads it)
        cases.put("{\"spec\":", false); // malformed: preflightd names it
        cases.put(null, false); // never reconciled
        for (Map.Entry<String, Boolean> c : cases.entrySet()) {
            String status = c.getKey() == null ? "{}" : "{\"reconciliationStatus\":{\"lastReconciledSpec\":" + Json.write(c.getKey()) + "}}";
            Object doc = Json.parse("{\"kind\":\"FlinkDeployment\",\"spec\":" + spec + ",\"status\":" + status + "}");
            eq(PreflightValidator.unchangedSpec((Map<?, ?>) doc), c.getValue(), "lastReconciledSpec " + c.getKey());
        }
        eq(PreflightValidator.describe(Map.of("kind", "FlinkDeployment", "metadata", Map.of("name", "a")), "x"), "FlinkDeployment a", "no namespace");
        eq(PreflightValidator.describe(Map.of(), "FlinkDeployment"), "FlinkDeployment", "no metadata");
    }

    static void failures() throws Exception {
        int dead;
        try (ServerSocket s = new ServerSocket(0)) {
            dead = s.getLocalPort();
        }
        try (FakeService svc = new FakeService()) {
            Map<String, Answer> cases = new LinkedHashMap<>();
            cases.put("HTTP 500", new Answer(500, "internal error", 0));
            cases.put("HTTP 404", new Answer(404, "404 page not found", 0));
            cases.put("not JSON", Answer.ok("<html>"));
            cases.put("no allowed", Answer.ok("{\"message\":\"x\"}"));
            cases.put("denied without message", Answer.ok("{\"allowed\":false,\"message\":\" \"}"));
            cases.put("too large", Answer.ok("{\"allowed\":true,\"message\":\"" + "x".repeat(AdmissionClient.MAX_ANSWER_BYTES) + "\"}"));
            for (Map.Entry<String, Answer> c : cases.entrySet()) {
                svc.answer = s -> c.getValue();
                eq(validator(conf("url", svc.url())).validate(overrides()), Optional.empty(), c.getKey() + ", fail-open: allowed");
                Optional<String> out = validator(conf("url", svc.url(), "on-failure", "fail-closed")).validate(overrides());
                check(out.isPresent(), c.getKey() + ", fail-closed: denied");
                contains(out.get(), "Preflight could not check the parallelism change of FlinkDeployment flink/compact-sink", c.getKey());
                contains(out.get(), "fail-closed", c.getKey());
            }
            Optional<String> out = validator(conf("url", "http://127.0.0.1:" + dead, "on-failure", "fail-closed")).validate(overrides());
            check(out.isPresent(), "preflightd down, fail-closed: denied");
            contains(out.get(), "cannot reach http://127.0.0.1:" + dead, "names the address");
            eq(validator(conf("url", "http://127.0.0.1:" + dead)).validate(overrides()), Optional.empty(), "preflightd down, fail-open: allowed");
        }
    }

    static void timeout() throws Exception {
        try (FakeService svc = new FakeService()) {
            svc.answer = s -> new Answer(200, ALLOWED, 5_000);
            long start = System.nanoTime();
            Optional<String> out = validator(conf("url", svc.url(), "on-failure", "fail-closed", "request-timeout", "300 ms")).validate(overrides());
            long ms = (System.nanoTime() - start) / 1_000_000;
            check(out.isPresent(), "a slow preflightd, fail-closed: denied");
            contains(out.get(), "within", "the timeout is named");
            check(ms < 2_000, "answered after " + ms + " ms, want about the 300 ms request timeout");
        }
    }

    static void mapperFailure() throws Exception {
        try (FakeService svc = new FakeService()) {
            svc.answer = s -> Answer.ok(ALLOWED);
            FlinkDeployment unknown = new FlinkDeployment(); // the test mapper has no JSON for it
            Optional<String> out = validator(conf("url", svc.url(), "on-failure", "fail-closed")).validate(unknown);
            check(out.isPresent(), "fail-closed: denied");
            contains(out.get(), "the operator's ObjectMapper cannot write the FlinkDeployment", "the mapper's failure");
            eq(validator(conf("url", svc.url())).validate(unknown), Optional.empty(), "fail-open: allowed");
            eq(validator(conf("url", svc.url())).validate(null), Optional.empty(), "null: allowed under fail-open, no exception");
            eq(svc.seen.size(), 0, "nothing sent");
        }
    }

    static void dryRun() throws Exception {
        try (FakeService svc = new FakeService(); LogCapture log = new LogCapture(PreflightValidator.class)) {
            svc.answer = s -> Answer.ok(DENIED);
            eq(validator(conf("url", svc.url(), "dry-run", "true", "on-failure", "fail-closed")).validate(overrides()), Optional.empty(),
                    "a dry run allows a denied change");
            contains(log.all(), "dry run, allowed anyway: Preflight denied", "and logs the denial");
        }
    }

    static void sessionJobAndSnapshot() throws Exception {
        try (FakeService svc = new FakeService()) {
            svc.answer = s -> Answer.ok(DENIED);
            MainOperatorValidator v = new MainOperatorValidator();
            v.configure(Configuration.fromMap(conf("url", svc.url())));
            String job = TestSupport.fixture(repo, "sessionjob-parallelism-4-to-8.json");
            check(v.validateSessionJob(TestResources.sessionJob(job), Optional.empty()).isPresent(), "a session job is checked");
            eq(svc.seen.get(0).body, job, "the session job is sent");
            eq(v.validateStateSnapshot(new FlinkStateSnapshot(), Optional.empty()), Optional.empty(), "snapshots are allowed");
            eq(svc.seen.size(), 1, "without a call");
        }
    }
}
