package com.github.flinkpreflight.validator;

import static com.github.flinkpreflight.testing.Checks.check;
import static com.github.flinkpreflight.testing.Checks.contains;
import static com.github.flinkpreflight.testing.Checks.eq;
import static com.github.flinkpreflight.validator.TestSupport.conf;

import com.github.flinkpreflight.testing.Checks;
import com.github.flinkpreflight.testing.FakeFlinkRest;
import com.github.flinkpreflight.testing.LogCapture;
import com.github.flinkpreflight.testing.Preflightd;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.kubernetes.operator.api.FlinkDeployment;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.logging.LogManager;

/**
 * The validator against a real preflightd, issue #27's cases: the fixtures of
 * internal/admission/testdata (operator-shaped FlinkDeployments of the compact-sink job, job ID in
 * the status), a fake JobManager REST endpoint serving that job and its savepoint
 * (testdata/compact-sink), and preflightd started with {@code --admission-flink-rest
 * http://127.0.0.1:{port}}, so each resource's {@code rest.port} picks the endpoint: the fake one,
 * or one that is down. Every case runs through both plugin classes (released operators' package
 * and main's), configured as the operator configures them.
 *
 * <p>Run: {@code java -cp ... EndToEndTest PATH_TO_PREFLIGHTD REPO_ROOT}.
 */
public final class EndToEndTest {

    static final String JOB = "a1b2c3d4e5f60718293a4b5c6d7e8f90"; // the fixtures' status.jobStatus.jobId

    static String repo;
    static Preflightd daemon;
    static FakeFlinkRest flink;
    static int down;

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: EndToEndTest PATH_TO_PREFLIGHTD REPO_ROOT");
            System.exit(2);
        }
        LogManager.getLogManager().reset();
        repo = args[1];
        Path savepoint = Paths.get(repo, "testdata", "compact-sink").toAbsolutePath().normalize();
        check(Files.isRegularFile(savepoint.resolve("_metadata")), "missing " + savepoint.resolve("_metadata"));
        try (ServerSocket s = new ServerSocket(0)) {
            down = s.getLocalPort();
        }
        int failed;
        try (FakeFlinkRest f = new FakeFlinkRest(savepoint, JOB);
                Preflightd d = Preflightd.start(args[0],
                        "--allow", savepoint.getParent().toString(),
                        "--allow", f.url() + "/",
                        "--allow", "http://127.0.0.1:" + down + "/",
                        "--admission-flink-rest", "http://127.0.0.1:{port}")) {
            flink = f;
            daemon = d;
            Map<String, Checks.Body> t = new LinkedHashMap<>();
            t.put("OverridesCompactUpDenied", () -> denied("deployment-overrides-4-to-8.json", "compact-operator", "4 -> 8"));
            t.put("JobParallelismUpDenied", () -> denied("deployment-parallelism-4-to-8.json", "compact-operator", "4 -> 8"));
            t.put("CompactDownAllowed", () -> allowed("deployment-compact-down.json", true));
            t.put("StatelessAllowedWithoutREST", () -> allowed("deployment-stateless.json", false));
            t.put("ImageOnlyAllowedWithoutREST", () -> allowed("deployment-image-only.json", false));
            t.put("SessionJobUpDenied", EndToEndTest::sessionJob);
            t.put("RESTDownFollowsPolicy", EndToEndTest::restDown);
            failed = Checks.runAll("EndToEndTest", t);
            if (failed > 0) {
                System.out.println("--- preflightd log ---\n" + d.log());
                System.out.println("--- fake Flink REST requests ---\n" + String.join("\n", f.requests));
            }
        }
        System.exit(failed == 0 ? 0 : 1);
    }

    /** The two plugins, configured as the operator does (Plugin.configure with its configuration). */
    static Map<String, Function<FlinkDeployment, Optional<String>>> plugins(String... options) {
        Configuration c = Configuration.fromMap(conf(options));
        ReleasedOperatorValidator released = new ReleasedOperatorValidator();
        released.configure(c);
        MainOperatorValidator main = new MainOperatorValidator();
        main.configure(c);
        Map<String, Function<FlinkDeployment, Optional<String>>> m = new LinkedHashMap<>();
        m.put("released", released::validateDeployment);
        m.put("main", main::validateDeployment);
        return m;
    }

    static FlinkDeployment deployment(String fixture, int restPort) throws Exception {
        return TestResources.deployment(TestSupport.withRestPort(TestSupport.fixture(repo, fixture), restPort));
    }

    static void show(String s) {
        System.out.println("     | " + s.replace("\n", "\n     | "));
    }

    static void denied(String fixture, String vertex, String change) throws Exception {
        for (Map.Entry<String, Function<FlinkDeployment, Optional<String>>> p : plugins("url", daemon.url).entrySet()) {
            Optional<String> out = p.getValue().apply(deployment(fixture, flink.port()));
            check(out.isPresent(), p.getKey() + ": denied");
            for (String want : new String[] {"PF101", "FLINK-31689", "keep 4", vertex, change, "FlinkDeployment flink/compact-sink"}) {
                contains(out.get(), want, p.getKey() + ": the message kubectl shows");
            }
            if (p.getKey().equals("released")) {
                show(out.get());
            }
        }
    }

    static void allowed(String fixture, boolean restUsed) throws Exception {
        for (Map.Entry<String, Function<FlinkDeployment, Optional<String>>> p : plugins("url", daemon.url, "on-failure", "fail-closed").entrySet()) {
            int before = flink.requests.size();
            try (LogCapture log = new LogCapture(PreflightValidator.class)) {
                eq(p.getValue().apply(deployment(fixture, flink.port())), Optional.empty(), p.getKey() + ": allowed; log:\n" + log.all());
                eq(flink.requests.size() > before, restUsed, p.getKey() + ": Flink REST called");
                contains(log.all(), "Preflight", "preflightd's answer is logged");
                if (p.getKey().equals("released")) {
                    show(log.all());
                }
            }
        }
    }

    static void sessionJob() throws Exception {
        MainOperatorValidator v = new MainOperatorValidator();
        v.configure(Configuration.fromMap(conf("url", daemon.url)));
        String json = TestSupport.withRestPort(TestSupport.fixture(repo, "sessionjob-parallelism-4-to-8.json"), flink.port());
        Optional<String> out = v.validateSessionJob(TestResources.sessionJob(json), Optional.empty());
        check(out.isPresent(), "denied");
        contains(out.get(), "keep 4", "the nearest safe parallelism");
        contains(out.get(), "FlinkSessionJob", "the kind");
        show(out.get());
    }

    static void restDown() throws Exception {
        String host = "127.0.0.1:" + down;
        for (String policy : new String[] {"fail-open", "fail-closed"}) {
            for (Map.Entry<String, Function<FlinkDeployment, Optional<String>>> p : plugins("url", daemon.url, "on-failure", policy).entrySet()) {
                try (LogCapture log = new LogCapture(PreflightValidator.class)) {
                    Optional<String> out = p.getValue().apply(deployment("deployment-overrides-4-to-8.json", down));
                    if (policy.equals("fail-open")) {
                        eq(out, Optional.empty(), p.getKey() + ": fail-open allows; log:\n" + log.all());
                        contains(log.all(), "WARNING Preflight could not check the parallelism change (reading " + host + ")", "the warning names the host");
                    } else {
                        check(out.isPresent(), p.getKey() + ": fail-closed denies");
                        contains(out.get(), host, "the denial names the host");
                        contains(out.get(), "failure policy is closed", "and why");
                    }
                    if (p.getKey().equals("released")) {
                        show(out.orElse(log.all()));
                    }
                }
            }
        }
    }
}
