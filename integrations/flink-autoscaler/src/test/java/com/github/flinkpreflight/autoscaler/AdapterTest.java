package com.github.flinkpreflight.autoscaler;

import static com.github.flinkpreflight.autoscaler.TestSupport.json;
import static com.github.flinkpreflight.autoscaler.TestSupport.summaries;
import static com.github.flinkpreflight.testing.Checks.check;
import static com.github.flinkpreflight.testing.Checks.contains;
import static com.github.flinkpreflight.testing.Checks.eq;
import static com.github.flinkpreflight.testing.Checks.expectThrows;

import com.github.flinkpreflight.autoscaler.TestSupport.Ctx;
import com.github.flinkpreflight.testing.Checks;
import com.github.flinkpreflight.testing.FakeService.Answer;
import com.github.flinkpreflight.testing.FakeService.Seen;
import com.github.flinkpreflight.testing.FakeService;
import com.github.flinkpreflight.testing.LogCapture;

import org.apache.flink.api.common.JobID;
import org.apache.flink.autoscaler.ScalingExecutorPlugin;
import org.apache.flink.autoscaler.ScalingSummary;
import org.apache.flink.runtime.jobgraph.JobVertexID;

import java.math.BigDecimal;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.jar.JarFile;

/**
 * The adapter's unit tests: JSON, configuration, the request it sends, the mapping of every answer
 * to approve / adjust / veto, and fail-open / fail-closed for every way the call can fail, against
 * a JDK HttpServer standing in for preflightd. Run: {@code java -cp ... AdapterTest ADAPTER_JAR}.
 */
public final class AdapterTest {

    static final String V1 = "bc764cd8ddf7a0cff126f51c16239658";
    static final String V2 = "0a448493b4782967b150582570326227";
    static final String V3 = "ea632d67b7d595e5b851708ae9ad79d6";

    private static String adapterJar;

    public static void main(String[] args) throws Exception {
        adapterJar = args.length > 0 ? args[0] : null;
        // The adapter's lines go to LogCapture in the tests that check them, not to the console.
        java.util.logging.LogManager.getLogManager().reset();
        Map<String, Checks.Body> t = new LinkedHashMap<>();
        t.put("JsonRoundTrip", AdapterTest::jsonRoundTrip);
        t.put("JsonMalformed", AdapterTest::jsonMalformed);
        t.put("DecoderSurvivesMutatedAnswers", AdapterTest::mutatedAnswers);
        t.put("ConfigDurationsSizesPolicies", AdapterTest::configParsing);
        t.put("ConfigErrorsNameTheKey", AdapterTest::configErrors);
        t.put("RequestBody", AdapterTest::requestBody);
        t.put("ApproveReturnsTheInput", AdapterTest::approve);
        t.put("AdjustChangesParallelism", AdapterTest::adjust);
        t.put("AdjustBackToCurrentDropsTheVertex", AdapterTest::adjustToCurrent);
        t.put("AdjustInconsistentAnswer", AdapterTest::adjustInconsistent);
        t.put("VetoReturnsEmptyAndLogsReasons", AdapterTest::veto);
        t.put("ServiceFailedFollowsItsAction", AdapterTest::serviceFailed);
        t.put("HttpErrorsFollowPolicy", AdapterTest::httpErrors);
        t.put("UnreachableFollowsPolicy", AdapterTest::unreachable);
        t.put("TimeoutFollowsPolicy", AdapterTest::timeout);
        t.put("BadAnswersFollowPolicy", AdapterTest::badAnswers);
        t.put("MissingUrlFollowsPolicy", AdapterTest::missingUrl);
        t.put("NoJobIdOrRestAddress", AdapterTest::noJobIdOrRest);
        t.put("FlinkRestUrlOverride", AdapterTest::restOverride);
        t.put("DryRunNeverChangesTheProposal", AdapterTest::dryRun);
        t.put("EmptyProposalMakesNoCall", AdapterTest::emptyProposal);
        t.put("ConcurrentJobs", AdapterTest::concurrentJobs);
        t.put("LinkageErrorFollowsPolicy", AdapterTest::linkageError);
        t.put("ServiceLoaderFindsThePlugin", AdapterTest::serviceLoader);
        System.exit(Checks.runAll("AdapterTest", t) == 0 ? 0 : 1);
    }

    // ---------------------------------------------------------------------------------------

    static void jsonRoundTrip() throws Exception {
        String[][] cases = {
            {"{}", "{}"},
            {" [ ] ", "[]"},
            {"{\"a\":1,\"b\":[true,false,null],\"c\":\"x\"}", "{\"a\":1,\"b\":[true,false,null],\"c\":\"x\"}"},
            {"{\"n\":-0.5e+3}", "{\"n\":-5E+2}"},
            {"\"\\u00e9\\ud83d\\ude00 \\\" \\\\ \\/ \\b\\f\\n\\r\\t\"", "\"\u00e9\ud83d\ude00 \\\" \\\\ / \\u0008\\u000c\\n\\r\\t\""},
            {"{\"dup\":1,\"dup\":2}", "{\"dup\":2}"},
        };
        for (String[] c : cases) {
            eq(Json.write(Json.parse(c[0])), c[1], "round trip of " + c[0]);
        }
        // Encoding of what the adapter sends: control characters escaped, order kept.
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("z", "a\u0001b\u2028");
        m.put("a", 7);
        m.put("l", List.of(1L, "s"));
        eq(Json.write(m), "{\"z\":\"a\\u0001b\\u2028\",\"a\":7,\"l\":[1,\"s\"]}", "encoding");
        Object big = Json.parse("12345678901234567890");
        eq(big, new BigDecimal("12345678901234567890"), "big numbers are exact");
        // Nesting up to the limit is fine.
        String deep = "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH);
        Json.parse(deep);
    }

    static void jsonMalformed() {
        String[][] cases = {
            {"", "character 0"},
            {"{", "character 1"},
            {"{\"a\":}", "character 5"},
            {"[1,]", "character 3"},
            {"01", "character 1"},
            {"1.", "character 2"},
            {"-", "character 0"},
            {"1e", "character 2"},
            {"\"\\x\"", "bad escape"},
            {"\"abc", "unterminated string"},
            {"\"\\u12\"", "\\u escape"},
            {"\"\\u12g4\"", "bad \\u escape"},
            {"\"a\nb\"", "control character"},
            {"tru", "expected true"},
            {"{\"a\":1}x", "after the value"},
            {"{a:1}", "member name"},
            {"[1 2]", "expected ',' or ']'"},
            {"1e999999999999", "out of range"},
            {"[".repeat(Json.MAX_DEPTH + 2), "nesting deeper"},
        };
        for (String[] c : cases) {
            Json.ParseException e = expectThrows(Json.ParseException.class, () -> Json.parse(c[0]), "parse " + c[0]);
            contains(e.getMessage(), c[1], "error for " + c[0]);
        }
    }

    /**
     * A seeded fuzz of the answer decoder: byte-level mutations of a real answer either decode or
     * fail with ParseException; nothing else escapes (no runtime exception, no stack overflow).
     */
    static void mutatedAnswers() {
        String seed = answer("ADJUST", par(V1, 6, V2, 3),
                "\"vertices\":[{\"vertexId\":\"" + V1 + "\",\"name\":\"n\\u00e9\",\"currentParallelism\":4,"
                        + "\"proposedParallelism\":8,\"action\":\"DECISION_ACTION_ADJUST\",\"parallelism\":6,"
                        + "\"findingIds\":[\"PF101\"],\"reason\":\"r\"}],\"failed\":false,\"findings\":[{\"x\":[1.5e3,null,true]}]");
        String alphabet = "{}[]\":,\\-+.eE0123456789 tfnrul\u00e9\u0000";
        java.util.Random rnd = new java.util.Random(575);
        int decoded = 0;
        for (int i = 0; i < 10_000; i++) {
            StringBuilder sb = new StringBuilder(seed);
            for (int k = 1 + rnd.nextInt(4); k > 0; k--) {
                int at = rnd.nextInt(sb.length() + 1);
                switch (rnd.nextInt(3)) {
                    case 0:
                        sb.insert(at, alphabet.charAt(rnd.nextInt(alphabet.length())));
                        break;
                    case 1:
                        if (at < sb.length()) {
                            sb.deleteCharAt(at);
                        }
                        break;
                    default:
                        if (at < sb.length()) {
                            sb.setCharAt(at, alphabet.charAt(rnd.nextInt(alphabet.length())));
                        }
                }
            }
            try {
                Decision.parse(sb.toString());
                decoded++;
            } catch (Json.ParseException expected) {
                // malformed or mis-shaped: the plugin then follows on-failure
            } catch (RuntimeException | StackOverflowError e) {
                throw new AssertionError("decoder threw " + e + " on: " + sb, e);
            }
        }
        check(decoded > 0 && decoded < 10_000, "mutations both decode and fail: " + decoded + " decoded");
        // Deep nesting is refused before it reaches the stack limit.
        expectThrows(Json.ParseException.class, () -> Decision.parse("{\"findings\":" + "[".repeat(100_000)), "deep nesting");
    }

    static void configParsing() throws Exception {
        Object[][] durations = {
            {"30 s", Duration.ofSeconds(30)},
            {"500", Duration.ofMillis(500)},
            {"500ms", Duration.ofMillis(500)},
            {"2min", Duration.ofMinutes(2)},
            {"2 m", Duration.ofMinutes(2)},
            {"1 h", Duration.ofHours(1)},
            {"250 us", Duration.ofNanos(250_000)},
            {" 3 SECONDS ", Duration.ofSeconds(3)},
        };
        for (Object[] d : durations) {
            eq(Options.parseDuration("k", (String) d[0]), d[1], "duration " + d[0]);
        }
        Object[][] sizes = {
            {"10485760b", 10485760L},
            {"10485760", 10485760L},
            {"10 mb", 10L << 20},
            {"1g", 1L << 30},
            {"64 kibibytes", 64L << 10},
        };
        for (Object[] s : sizes) {
            eq(Options.parseMemorySize("k", (String) s[0]), s[1], "size " + s[0]);
        }
        eq(AdapterConfig.parsePolicy(null), AdapterConfig.FailurePolicy.FAIL_CLOSED, "default policy");
        eq(AdapterConfig.parsePolicy("FAIL_OPEN"), AdapterConfig.FailurePolicy.FAIL_OPEN, "policy FAIL_OPEN");
        eq(AdapterConfig.parsePolicy(" fail-open"), AdapterConfig.FailurePolicy.FAIL_OPEN, "policy fail-open");
        eq(AdapterConfig.parsePolicy("closed"), AdapterConfig.FailurePolicy.FAIL_CLOSED, "policy closed");
        eq(AdapterConfig.operatorFlinkVersion("v1_19"), "1.19", "operator version v1_19");
        eq(AdapterConfig.operatorFlinkVersion("v2_0"), "2.0", "operator version v2_0");
        eq(AdapterConfig.operatorFlinkVersion("1.19"), "", "not an operator version");

        Map<String, String> conf = new LinkedHashMap<>();
        conf.put("url", "https://preflight.example:8443/prefix");
        conf.put("$internal.flink.version", "v1_20");
        conf.put("pekko.framesize", "20 mb");
        conf.put("akka.framesize", "1 mb"); // the older name loses to the newer one
        conf.put("request-timeout", "5 s");
        AdapterConfig c = AdapterConfig.parse(conf);
        eq(c.serviceUrl.toString(), "https://preflight.example:8443/prefix", "url");
        eq(c.flinkVersion, "1.20", "flink version from the operator's key");
        eq(c.rpcFrameSizeBytes, 20L << 20, "frame size");
        eq(c.requestTimeout, Duration.ofSeconds(5), "request timeout");
        eq(c.connectTimeout, AdapterConfig.DEFAULT_CONNECT_TIMEOUT, "default connect timeout");
        eq(c.onFailure, AdapterConfig.FailurePolicy.FAIL_CLOSED, "default policy");
        eq(c.flinkRestUrl, null, "no REST override");
        conf.put("flink-version", "1.19.1");
        eq(AdapterConfig.parse(conf).flinkVersion, "1.19.1", "explicit flink-version wins");
        eq(DecideClient.grpcTimeout(Duration.ofSeconds(30)), "27000m", "Grpc-Timeout of 30 s");
        eq(DecideClient.grpcTimeout(Duration.ofDays(2000)), "99999999S", "Grpc-Timeout is capped at 8 digits");
    }

    static void configErrors() {
        String[][] cases = {
            {"", "", "'url' is not set"},
            {"ftp://x", "", "'url' is not an http(s) URL"},
            {"http://ok:1", "connect-timeout=abc", "'connect-timeout' is not a duration"},
            {"http://ok:1", "request-timeout=0 s", "'request-timeout' must be positive"},
            {"http://ok:1", "request-timeout=5 parsecs", "unknown time unit"},
            {"http://ok:1", "on-failure=maybe", "'on-failure' is 'maybe'"},
            {"http://ok:1", "dry-run=yes", "'dry-run' is 'yes'"},
            {"http://ok:1", "pekko.framesize=10 qb", "'pekko.framesize' has an unknown size unit"},
            {"http://ok:1", "flink-rest-url=not a url", "'flink-rest-url' is not a URL"},
        };
        for (String[] c : cases) {
            Map<String, String> conf = new LinkedHashMap<>();
            conf.put("url", c[0]);
            if (!c[1].isEmpty()) {
                String[] kv = c[1].split("=", 2);
                conf.put(kv[0], kv[1]);
            }
            ConfigException e =
                    expectThrows(ConfigException.class, () -> AdapterConfig.parse(conf), c[1]);
            contains(e.getMessage(), c[2], "error for " + c[0] + " " + c[1]);
        }
    }

    static void requestBody() throws Exception {
        Map<String, String> conf = new LinkedHashMap<>();
        conf.put("url", "http://p:8080");
        conf.put("on-failure", "fail-open");
        conf.put("flink-version", "1.19");
        conf.put("akka.framesize", "10485760b");
        conf.put("align-to-key-groups", "true");
        Map<String, Integer> proposed = new LinkedHashMap<>();
        proposed.put(V2, 8);
        proposed.put(V1, 3);
        String body =
                DecideClient.requestBody(
                        AdapterConfig.parse(conf),
                        new DecideClient.Request("http://rest:8081", "0123456789abcdef0123456789abcdef", proposed));
        eq(
                body,
                "{\"job\":{\"restUrl\":\"http://rest:8081\",\"jobId\":\"0123456789abcdef0123456789abcdef\"},"
                        + "\"proposedParallelism\":{\"" + V2 + "\":8,\"" + V1 + "\":3},"
                        + "\"options\":{\"flinkVersion\":\"1.19\",\"rpcFrameSizeBytes\":\"10485760\"},"
                        + "\"onFailure\":\"FAILURE_POLICY_FAIL_OPEN\",\"alignToKeyGroups\":true}",
                "DecideRequest JSON");
        conf.remove("flink-version");
        conf.remove("akka.framesize");
        conf.remove("align-to-key-groups");
        conf.remove("on-failure");
        body = DecideClient.requestBody(AdapterConfig.parse(conf), new DecideClient.Request("http://r", "00000000000000000000000000000000", proposed));
        check(!body.contains("options") && !body.contains("alignToKeyGroups"), "zero values are left out: " + body);
        contains(body, "\"onFailure\":\"FAILURE_POLICY_FAIL_CLOSED\"", "the default policy is sent explicitly");
    }

    /** A DecideResponse as protojson writes it (zero values omitted). */
    static String answer(String action, Map<String, Integer> parallelism, String extra) {
        StringBuilder sb = new StringBuilder("{\"action\":\"DECISION_ACTION_" + action + "\"");
        if (parallelism != null && !parallelism.isEmpty()) {
            sb.append(",\"parallelism\":").append(Json.write(parallelism));
        }
        sb.append(",\"checkpoint\":\"s3://state/job/chk-42\",\"checkpointNote\":\"latest completed checkpoint, 3 min old\"");
        if (!extra.isEmpty()) {
            sb.append(',').append(extra);
        }
        return sb.append('}').toString();
    }

    static Map<String, Integer> par(Object... kv) {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], (Integer) kv[i + 1]);
        }
        return m;
    }

    static void approve() throws Exception {
        try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
            svc.answer = s -> Answer.ok(answer("APPROVE", par(V1, 8, V2, 2), ""));
            Ctx ctx = new Ctx().plugin("url", svc.url());
            Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8, V2, 3, 2);
            Map<JobVertexID, ScalingSummary> out = new PreflightScalingExecutor<String>().apply(ctx.build(), in);
            check(out == in, "APPROVE returns the input itself");
            eq(svc.seen.size(), 1, "one call");
            Seen s = svc.seen.get(0);
            eq(s.method + " " + s.path, "POST /v1/decide", "endpoint");
            Map<String, Object> req = json(s);
            eq(Json.write(req.get("job")), "{\"restUrl\":\"http://my-job-rest.flink-ns:8081\",\"jobId\":\"0123456789abcdef0123456789abcdef\"}", "job from the context");
            eq(Json.write(req.get("proposedParallelism")), "{\"" + V1 + "\":8,\"" + V2 + "\":2}", "proposal");
            eq(req.get("onFailure"), "FAILURE_POLICY_FAIL_CLOSED", "policy sent");
            eq(s.header("Grpc-Timeout"), "27000m", "deadline passed to the gateway");
            contains(s.header("X-Request-Id"), "autoscaler-0123456789abcdef0123456789abcdef-", "request id");
            contains(s.header("Content-Type"), "application/json", "content type");
            eq(ctx.restClientsOpened.get(), 1, "REST client opened once");
            eq(ctx.restClientsClosed.get(), 1, "REST client closed");
            contains(log.all(), "INFO Preflight APPROVE for job flink-ns/my-job (0123456789abcdef0123456789abcdef), checkpoint s3://state/job/chk-42 (latest completed checkpoint, 3 min old)", "log");
            eq(new PreflightScalingExecutor<String>().priority(), Integer.MAX_VALUE, "runs last in the chain");
        }
    }

    static void adjust() throws Exception {
        try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
            String vertices =
                    "\"vertices\":[{\"vertexId\":\"" + V1 + "\",\"name\":\"compact-operator\",\"currentParallelism\":4,"
                            + "\"proposedParallelism\":8,\"action\":\"DECISION_ACTION_ADJUST\",\"parallelism\":4,"
                            + "\"findingIds\":[\"PF101\"],\"reason\":\"new subtasks 4-7 would get no expired-files\"}]";
            // V2 adjusted from 12 to 6, V3 approved as proposed; keys in upper case.
            svc.answer = s -> Answer.ok(answer("ADJUST", par(V2.toUpperCase(), 6, V3, 5), vertices));
            Map<JobVertexID, ScalingSummary> in = summaries(V2, 4, 12, V3, 3, 5);
            Map<JobVertexID, ScalingSummary> out =
                    new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", svc.url()).build(), in);
            eq(out.size(), 2, "both vertices still scale");
            ScalingSummary v2 = out.get(TestSupport.vertex(V2));
            eq(v2.getCurrentParallelism(), 4, "current kept");
            eq(v2.getNewParallelism(), 6, "adjusted parallelism");
            check(v2.getMetrics() == in.get(TestSupport.vertex(V2)).getMetrics(), "metrics carried over");
            check(out.get(TestSupport.vertex(V3)) == in.get(TestSupport.vertex(V3)), "an unchanged vertex keeps its summary");
            eq(in.get(TestSupport.vertex(V2)).getNewParallelism(), 12, "the input is not modified");
            eq(new ArrayList<>(out.keySet()), new ArrayList<>(in.keySet()), "order kept");
            String l = log.all();
            contains(l, "WARNING Preflight ADJUST for job", "log level and action");
            contains(l, "applying {" + V2 + "=6, " + V3 + "=5}", "applied map logged");
            contains(l, V1 + " (compact-operator) 4 -> 8: ADJUST to 4 [PF101] new subtasks 4-7 would get no expired-files", "vertex reason logged");
        }
    }

    static void adjustToCurrent() throws Exception {
        try (FakeService svc = new FakeService("/v1/decide")) {
            svc.answer = s -> Answer.ok(answer("ADJUST", par(V1, 4, V2, 10), ""));
            Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8, V2, 8, 12);
            Map<JobVertexID, ScalingSummary> out =
                    new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", svc.url()).build(), in);
            eq(out.keySet(), Collections.singleton(TestSupport.vertex(V2)), "V1 back at its current parallelism is dropped");
            eq(out.get(TestSupport.vertex(V2)).getNewParallelism(), 10, "V2 adjusted");
            svc.answer = s -> Answer.ok(answer("ADJUST", par(V1, 4), ""));
            out = new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", svc.url()).build(), summaries(V1, 4, 8));
            check(out.isEmpty(), "nothing left to scale: empty map");
        }
    }

    static void adjustInconsistent() throws Exception {
        String[] answers = {
            answer("ADJUST", par(V1, 6), ""), // V2 missing
            answer("ADJUST", par(V1, 6, V2, 0), ""), // zero parallelism
        };
        for (String a : answers) {
            for (String policy : new String[] {"fail-closed", "fail-open"}) {
                try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
                    svc.answer = s -> Answer.ok(a);
                    Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8, V2, 4, 8);
                    Map<JobVertexID, ScalingSummary> out =
                            new PreflightScalingExecutor<String>()
                                    .apply(new Ctx().plugin("url", svc.url()).plugin("on-failure", policy).build(), in);
                    expectPolicy(policy, in, out, a);
                    contains(log.all(), "the ADJUST answer", "reason logged");
                }
            }
        }
    }

    static void expectPolicy(String policy, Map<JobVertexID, ScalingSummary> in, Map<JobVertexID, ScalingSummary> out, String what) {
        if (policy.equals("fail-open")) {
            check(out == in, "fail-open approves: " + what);
        } else {
            check(out != null && out.isEmpty(), "fail-closed vetoes: " + what + " -> " + out);
        }
    }

    static void veto() throws Exception {
        try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
            String vertices =
                    "\"vertices\":[{\"vertexId\":\"" + V1 + "\",\"name\":\"compact-operator\",\"currentParallelism\":4,"
                            + "\"proposedParallelism\":8,\"action\":\"DECISION_ACTION_VETO\",\"parallelism\":4,"
                            + "\"findingIds\":[\"PF101\"],\"reason\":\"subtasks 4-7 would crash-loop (FLINK-31689)\"},"
                            + "{\"vertexId\":\"" + V2 + "\",\"currentParallelism\":2,\"proposedParallelism\":3,"
                            + "\"action\":\"DECISION_ACTION_APPROVE\",\"parallelism\":3}],"
                            + "\"findings\":[{\"id\":\"PF101\",\"unknownField\":{\"x\":[1,2]}}],\"someNewField\":true";
            svc.answer = s -> Answer.ok(answer("VETO", null, vertices));
            Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8, V2, 2, 3);
            Map<JobVertexID, ScalingSummary> out =
                    new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", svc.url()).build(), in);
            check(out.isEmpty(), "VETO returns an empty map");
            String l = log.all();
            contains(l, "WARNING Preflight VETO for job flink-ns/my-job", "veto logged as a warning");
            contains(l, V1 + " (compact-operator) 4 -> 8: VETO [PF101] subtasks 4-7 would crash-loop (FLINK-31689)", "reason");
            contains(l, V2 + " 2 -> 3: APPROVE", "other vertices listed");
        }
    }

    static void serviceFailed() throws Exception {
        // The service could not read the checkpoint and applied the policy we sent.
        String[][] cases = {
            {"APPROVE", "fail-open"},
            {"VETO", "fail-closed"},
        };
        for (String[] c : cases) {
            try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
                svc.answer = s -> Answer.ok("{\"action\":\"DECISION_ACTION_" + c[0] + "\",\"failed\":true,"
                        + "\"failure\":\"no completed checkpoint for job 0123...\"}");
                Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
                Map<JobVertexID, ScalingSummary> out =
                        new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", svc.url()).plugin("on-failure", c[1]).build(), in);
                expectPolicy(c[1], in, out, c[0]);
                eq(json(svc.seen.get(0)).get("onFailure"), c[1].equals("fail-open") ? "FAILURE_POLICY_FAIL_OPEN" : "FAILURE_POLICY_FAIL_CLOSED", "policy sent");
                contains(log.all(), "Preflight could not check job flink-ns/my-job", "failure logged");
                contains(log.all(), "no completed checkpoint for job 0123...", "failure text logged");
            }
        }
    }

    static void httpErrors() throws Exception {
        Object[][] cases = {
            {503, "{\"code\":14,\"message\":\"Flink REST http://x unreachable\",\"details\":[]}", "HTTP 503 (gRPC code 14): Flink REST http://x unreachable"},
            {403, "{\"code\":7,\"message\":\"http://x is outside the allowlist\",\"details\":[]}", "HTTP 403 (gRPC code 7): http://x is outside the allowlist"},
            {429, "{\"code\":8,\"message\":\"2 checks running, none free\",\"details\":[]}", "HTTP 429 (gRPC code 8): 2 checks running, none free"},
            {400, "{\"code\":3,\"message\":\"proposal key ab12 names no vertex\",\"details\":[]}", "HTTP 400 (gRPC code 3): proposal key ab12 names no vertex"},
            {502, "<html>bad gateway</html>", "HTTP 502: <html>bad gateway</html>"},
            {500, "", "HTTP 500"},
        };
        for (Object[] c : cases) {
            for (String policy : new String[] {"fail-closed", "fail-open"}) {
                try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
                    svc.answer = s -> new Answer((Integer) c[0], (String) c[1], 0);
                    Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
                    Map<JobVertexID, ScalingSummary> out =
                            new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", svc.url()).plugin("on-failure", policy).build(), in);
                    expectPolicy(policy, in, out, "HTTP " + c[0]);
                    contains(log.all(), (String) c[2], "error logged");
                    contains(log.all(), policy.equals("fail-open") ? "fail-open: approving" : "fail-closed: vetoing", "policy logged");
                }
            }
        }
        // A server without the decision API (path unknown) is a failure too.
        try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
            Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
            Map<JobVertexID, ScalingSummary> out =
                    new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", svc.url() + "/wrong-prefix").build(), in);
            check(out.isEmpty(), "404 vetoes under fail-closed");
            eq(svc.seen.get(0).path, "/wrong-prefix/v1/decide", "the URL's path is kept as a prefix");
            contains(log.all(), "HTTP 404", "404 logged");
        }
    }

    static void unreachable() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        } // closed: connections are refused
        for (String policy : new String[] {"fail-closed", "fail-open"}) {
            try (LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
                Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
                long start = System.nanoTime();
                Map<JobVertexID, ScalingSummary> out =
                        new PreflightScalingExecutor<String>()
                                .apply(new Ctx().plugin("url", "http://127.0.0.1:" + port).plugin("on-failure", policy).build(), in);
                long ms = (System.nanoTime() - start) / 1_000_000;
                expectPolicy(policy, in, out, "connection refused");
                contains(log.all(), "cannot reach http://127.0.0.1:" + port + "/v1/decide", "logged");
                check(ms < 20_000, "refused connections fail fast, took " + ms + " ms");
            }
        }
    }

    static void timeout() throws Exception {
        for (String policy : new String[] {"fail-closed", "fail-open"}) {
            try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
                svc.answer = s -> new Answer(200, answer("APPROVE", null, ""), 5_000);
                Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
                long start = System.nanoTime();
                Map<JobVertexID, ScalingSummary> out =
                        new PreflightScalingExecutor<String>()
                                .apply(new Ctx().plugin("url", svc.url()).plugin("request-timeout", "300 ms").plugin("on-failure", policy).build(), in);
                long ms = (System.nanoTime() - start) / 1_000_000;
                expectPolicy(policy, in, out, "timeout");
                check(ms >= 250 && ms < 4_000, "gave up after the request timeout, took " + ms + " ms");
                contains(log.all(), "no answer from " + svc.url() + "/v1/decide within", "logged");
                eq(svc.seen.get(0).header("Grpc-Timeout"), "270m", "the service is told the deadline");
            }
        }
    }

    static void badAnswers() throws Exception {
        String[][] cases = {
            {"not json", "unreadable answer"},
            {"[1,2]", "not a JSON object"},
            {"{\"action\":\"DECISION_ACTION_UNSPECIFIED\"}", "no action"},
            {"{}", "no action"},
            {"{\"action\":\"DECISION_ACTION_FROM_THE_FUTURE\"}", "no action"},
            {"{\"action\":\"DECISION_ACTION_ADJUST\",\"parallelism\":{\"" + V1 + "\":\"x\"}}", "not an int32"},
            {"{\"action\":\"DECISION_ACTION_ADJUST\",\"parallelism\":{\"" + V1 + "\":3000000000}}", "not an int32"},
            {"{\"action\":\"DECISION_ACTION_APPROVE\",\"failed\":\"yes\"}", "failed is not a boolean"},
            {"x".repeat(DecideClient.MAX_ANSWER_BYTES + 1), "larger than"},
        };
        for (String[] c : cases) {
            try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
                svc.answer = s -> Answer.ok(c[0]);
                Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
                Map<JobVertexID, ScalingSummary> out =
                        new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", svc.url()).build(), in);
                String what = c[0].length() > 60 ? c[0].substring(0, 60) + "..." : c[0];
                expectPolicy("fail-closed", in, out, what);
                contains(log.all(), c[1], "logged for " + what);
            }
        }
        // Numbers as strings and enums as numbers are valid protojson.
        try (FakeService svc = new FakeService("/v1/decide")) {
            svc.answer = s -> Answer.ok("{\"action\":2,\"parallelism\":{\"" + V1 + "\":\"6\"}}");
            Map<JobVertexID, ScalingSummary> out =
                    new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", svc.url()).build(), summaries(V1, 4, 8));
            eq(out.get(TestSupport.vertex(V1)).getNewParallelism(), 6, "protojson alternatives accepted");
        }
    }

    static void missingUrl() throws Exception {
        try (LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
            Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
            Ctx ctx = new Ctx();
            Map<JobVertexID, ScalingSummary> out = new PreflightScalingExecutor<String>().apply(ctx.build(), in);
            check(out.isEmpty(), "no url: fail-closed by default");
            contains(log.all(), "configuration: 'url' is not set", "logged");
            eq(ctx.restClientsOpened.get(), 0, "no REST client opened");
            out = new PreflightScalingExecutor<String>().apply(new Ctx().plugin("on-failure", "fail-open").build(), in);
            check(out == in, "no url, fail-open approves");
            // An unreadable policy itself means fail-closed.
            out = new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", "http://x:1").plugin("on-failure", "sometimes").build(), in);
            check(out.isEmpty(), "bad policy: fail-closed");
        }
        // A job-level key can set the policy too (the plugin options are merged on top of the job's).
        Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
        Map<JobVertexID, ScalingSummary> out = new PreflightScalingExecutor<String>().apply(new Ctx().job("on-failure", "fail-open").build(), in);
        check(out == in, "policy from the merged configuration");
    }

    static void noJobIdOrRest() throws Exception {
        try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
            svc.answer = s -> Answer.ok(answer("APPROVE", null, ""));
            Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
            Ctx ctx = new Ctx().plugin("url", svc.url());
            ctx.jobId = null;
            check(new PreflightScalingExecutor<String>().apply(ctx.build(), in).isEmpty(), "no job id: fail-closed");
            contains(log.all(), "the job has no job id yet", "logged");

            ctx = new Ctx().plugin("url", svc.url()).plugin("on-failure", "fail-open");
            ctx.restUrl = "Unknown address.";
            check(new PreflightScalingExecutor<String>().apply(ctx.build(), in) == in, "no REST address: fail-open approves");
            contains(log.all(), "no Flink REST address (set 'flink-rest-url')", "logged");
            eq(ctx.restClientsClosed.get(), 1, "REST client closed after a failure too");
            eq(svc.seen.size(), 0, "no call without a job");
        }
    }

    static void restOverride() throws Exception {
        try (FakeService svc = new FakeService("/v1/decide")) {
            svc.answer = s -> Answer.ok(answer("APPROVE", null, ""));
            Ctx ctx = new Ctx().plugin("url", svc.url()).plugin("flink-rest-url", "https://jm.example:443");
            new PreflightScalingExecutor<String>().apply(ctx.build(), summaries(V1, 4, 8));
            eq(Json.write(json(svc.seen.get(0)).get("job")), "{\"restUrl\":\"https://jm.example:443\",\"jobId\":\"0123456789abcdef0123456789abcdef\"}", "override used");
            eq(ctx.restClientsOpened.get(), 0, "the REST client is not needed");
            // A trailing slash from the REST client is dropped.
            ctx = new Ctx().plugin("url", svc.url());
            ctx.restUrl = "http://jm:8081/";
            new PreflightScalingExecutor<String>().apply(ctx.build(), summaries(V1, 4, 8));
            contains(svc.seen.get(1).body, "\"restUrl\":\"http://jm:8081\"", "trailing slash dropped");
        }
    }

    static void dryRun() throws Exception {
        try (FakeService svc = new FakeService("/v1/decide"); LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
            svc.answer = s -> Answer.ok(answer("VETO", null, ""));
            Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
            Map<JobVertexID, ScalingSummary> out =
                    new PreflightScalingExecutor<String>().apply(new Ctx().plugin("url", svc.url()).plugin("dry-run", "true").build(), in);
            check(out == in, "dry run approves a veto");
            contains(log.all(), "Preflight (dry run, not applied) VETO", "logged");
            out = new PreflightScalingExecutor<String>()
                    .apply(new Ctx().plugin("url", svc.url() + "/nothing-here").plugin("dry-run", "true").build(), in);
            check(out == in, "dry run approves on failure under fail-closed");
            contains(log.all(), "(dry run: not applied)", "logged");
        }
    }

    static void emptyProposal() throws Exception {
        try (FakeService svc = new FakeService("/v1/decide")) {
            PreflightScalingExecutor<String> p = new PreflightScalingExecutor<>();
            Map<JobVertexID, ScalingSummary> empty = Collections.emptyMap();
            check(p.apply(new Ctx().plugin("url", svc.url()).build(), empty) == empty, "empty in, empty out");
            check(p.apply(new Ctx().plugin("url", svc.url()).build(), null) == null, "null in, null out");
            eq(svc.seen.size(), 0, "no call");
        }
    }

    /** One plugin instance serves many jobs at once; every job gets its own answer. */
    static void concurrentJobs() throws Exception {
        try (FakeService svc = new FakeService("/v1/decide")) {
            svc.answer = s -> {
                try {
                    Map<?, ?> req = json(s);
                    String job = (String) ((Map<?, ?>) req.get("job")).get("jobId");
                    int n = Integer.parseInt(job.substring(30), 16); // job i proposes V1 -> i+2
                    return new Answer(200, answer(n % 3 == 0 ? "VETO" : "ADJUST", par(V1, n + 1), ""), 20);
                } catch (Json.ParseException e) {
                    return new Answer(400, "{}", 0);
                }
            };
            PreflightScalingExecutor<String> plugin = new PreflightScalingExecutor<>();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<Void>> fs = new ArrayList<>();
                for (int i = 0; i < 24; i++) {
                    final int n = i;
                    Callable<Void> c = () -> {
                        Ctx ctx = new Ctx().plugin("url", svc.url());
                        ctx.key = "ns/job-" + n;
                        ctx.jobId = JobID.fromHexString(String.format("%030x%02x", 0, n));
                        Map<JobVertexID, ScalingSummary> out = plugin.apply(ctx.build(), summaries(V1, 1, n + 2));
                        if (n % 3 == 0) {
                            check(out.isEmpty(), "job " + n + " vetoed");
                        } else {
                            eq(out.get(TestSupport.vertex(V1)).getNewParallelism(), n + 1, "job " + n + " adjusted");
                        }
                        return null;
                    };
                    fs.add(pool.submit(c));
                }
                for (Future<Void> f : fs) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            eq(svc.seen.size(), 24, "one call per job");
        }
    }

    /**
     * An operator whose SPI differs from the one the jar was built for throws NoSuchMethodError
     * inside apply; the plugin must answer by its policy instead of failing the scaling cycle.
     */
    static void linkageError() throws Exception {
        for (String policy : new String[] {"fail-closed", "fail-open"}) {
            try (LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
                Ctx c = new Ctx().plugin("url", "http://127.0.0.1:1").plugin("on-failure", policy);
                ScalingExecutorPlugin.Context<String> broken =
                        new ScalingExecutorPlugin.Context<String>(c.build(), new org.apache.flink.configuration.Configuration()) {
                            @Override
                            public String getJobKey() {
                                throw new NoSuchMethodError("getJobKey");
                            }
                        };
                Map<JobVertexID, ScalingSummary> in = summaries(V1, 4, 8);
                expectPolicy(policy, in, new PreflightScalingExecutor<String>().apply(broken, in), "NoSuchMethodError");
                contains(log.all(), "unexpected java.lang.NoSuchMethodError: getJobKey", "logged");
            }
        }
    }

    /** The jar registers the plugin for ServiceLoader and ships no Flink classes. */
    static void serviceLoader() throws Exception {
        check(adapterJar != null, "pass the adapter jar as the first argument");
        try (JarFile jar = new JarFile(adapterJar)) {
            check(jar.getEntry("META-INF/services/org.apache.flink.autoscaler.ScalingExecutorPlugin") != null, "service file in the jar");
            jar.stream().forEach(e -> check(!e.getName().startsWith("org/"), "the jar must not ship " + e.getName()));
        }
        List<String> found = new ArrayList<>();
        @SuppressWarnings("rawtypes")
        ServiceLoader<ScalingExecutorPlugin> loader = ServiceLoader.load(ScalingExecutorPlugin.class);
        for (ScalingExecutorPlugin<?> p : loader) {
            found.add(p.getClass().getName());
        }
        eq(found, List.of(PreflightScalingExecutor.class.getName()), "ServiceLoader finds the plugin");
    }
}
