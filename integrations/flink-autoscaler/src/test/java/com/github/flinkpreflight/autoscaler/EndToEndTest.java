package com.github.flinkpreflight.autoscaler;

import static com.github.flinkpreflight.testing.Checks.check;
import static com.github.flinkpreflight.testing.Checks.contains;
import static com.github.flinkpreflight.testing.Checks.eq;

import com.github.flinkpreflight.autoscaler.TestSupport.Ctx;
import com.github.flinkpreflight.testing.Checks;
import com.github.flinkpreflight.testing.FakeFlinkRest;
import com.github.flinkpreflight.testing.LogCapture;
import com.github.flinkpreflight.testing.Preflightd;

import org.apache.flink.api.common.JobID;
import org.apache.flink.autoscaler.ScalingSummary;
import org.apache.flink.runtime.jobgraph.JobVertexID;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.LogManager;

/**
 * The adapter against a real preflightd: the daemon is started on loopback, a fake Flink REST
 * endpoint ({@link FakeFlinkRest}: JDK HttpServer, responses shaped like Flink 2.1's REST API) reports a running job with
 * the table filesystem sink of {@code testdata/compact-sink} and that savepoint as its latest, and
 * the plugin is called as the operator calls it. Proposals that Flink's restore would survive are
 * approved, the compact-operator scale-up (FLINK-31689) is vetoed, a misaligned one is adjusted,
 * and an unknown job follows the failure policy.
 *
 * <p>Run: {@code java -cp ... EndToEndTest PATH_TO_PREFLIGHTD REPO_ROOT}.
 */
public final class EndToEndTest {

    static final String JOB = "7f3c9a1e5b2d4c6e8a0b1c2d3e4f5a6b";
    // The vertices of the compact-sink job: a vertex's id is its chain head's operator id.
    static final String SOURCE = "45b0254a46cabbc3efeea5d2e170ea5b"; // Source: orders -> streaming-writer
    static final String COORDINATOR = "d7b11ad20303f98d3eb37a5e0525fff8"; // compact-coordinator
    static final String COMPACT = "0d9ffb4f280d028d86dadba01ac205d7"; // compact-operator
    static final String COMMITTER = "a004e297ed656c7b8e968e04069ca1a0"; // PartitionCommitter -> Sink: end

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: EndToEndTest PATH_TO_PREFLIGHTD REPO_ROOT");
            System.exit(2);
        }
        LogManager.getLogManager().reset();
        Path savepoint = Paths.get(args[1], "testdata", "compact-sink").toAbsolutePath().normalize();
        check(Files.isRegularFile(savepoint.resolve("_metadata")), "missing " + savepoint.resolve("_metadata"));
        int failed;
        try (FakeFlinkRest flink = new FakeFlinkRest(savepoint, JOB);
                Preflightd daemon = Preflightd.start(args[0], "--allow", savepoint.getParent().toString(), "--allow", flink.url() + "/")) {
            Map<String, Checks.Body> t = new LinkedHashMap<>();
            t.put("SafeScaleUpApproved", () -> safeScaleUp(daemon, flink));
            t.put("CompactOperatorScaleUpVetoed", () -> compactScaleUp(daemon, flink));
            t.put("MisalignedScaleUpAdjusted", () -> misaligned(daemon, flink));
            t.put("UnknownJobFollowsPolicy", () -> unknownJob(daemon, flink));
            failed = Checks.runAll("EndToEndTest", t);
            if (failed > 0) {
                System.out.println("--- preflightd log ---\n" + daemon.log());
                System.out.println("--- fake Flink REST requests ---\n" + String.join("\n", flink.requests));
            }
        }
        System.exit(failed == 0 ? 0 : 1);
    }

    /** The adapter's lines of a case, shown in the test output: the daemon's real decisions. */
    static void show(LogCapture log) {
        System.out.println("     | " + log.all().replace("\n", "\n     | "));
    }

    static Ctx ctx(Preflightd daemon, FakeFlinkRest flink) {
        Ctx c = new Ctx().plugin("url", daemon.url);
        c.key = "flink/orders-to-fs";
        c.jobId = JobID.fromHexString(JOB);
        c.restUrl = flink.url();
        return c;
    }

    static void safeScaleUp(Preflightd daemon, FakeFlinkRest flink) throws Exception {
        try (LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
            Map<JobVertexID, ScalingSummary> in = TestSupport.summaries(SOURCE, 4, 8);
            Map<JobVertexID, ScalingSummary> out = new PreflightScalingExecutor<String>().apply(ctx(daemon, flink).build(), in);
            check(out == in, "a safe scale-up is approved as proposed; log:\n" + log.all());
            contains(log.all(), "Preflight APPROVE for job flink/orders-to-fs (" + JOB + ")", "approval logged");
            contains(log.all(), "compact-sink", "the discovered savepoint is named");
            // The request ID in the adapter's line is the one preflightd logs for the call.
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\[request (autoscaler-[0-9a-f-]+)\\]").matcher(log.all());
            check(m.find(), "request id logged");
            String id = m.group(1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!daemon.log().contains("\"request_id\":\"" + id + "\"") && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            contains(daemon.log(), "\"request_id\":\"" + id + "\"", "preflightd logs the adapter's request id");
            show(log);
        }
    }

    static void compactScaleUp(Preflightd daemon, FakeFlinkRest flink) throws Exception {
        try (LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
            // The autoscaler raises the source and the compaction together.
            Map<JobVertexID, ScalingSummary> in = TestSupport.summaries(SOURCE, 4, 8, COMPACT, 4, 8);
            Map<JobVertexID, ScalingSummary> out = new PreflightScalingExecutor<String>().apply(ctx(daemon, flink).build(), in);
            check(out.isEmpty(), "FLINK-31689: new compact-operator subtasks would crash-loop, so the scaling is vetoed; got " + out + "; log:\n" + log.all());
            String l = log.all();
            contains(l, "Preflight VETO for job flink/orders-to-fs", "veto logged");
            contains(l, COMPACT, "the vertex is named");
            contains(l, "PF101", "the finding is named");
            show(log);
        }
    }

    static void misaligned(Preflightd daemon, FakeFlinkRest flink) throws Exception {
        try (LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
            // 5 does not divide the max parallelism 128; aligned, the nearest above is 8.
            Map<JobVertexID, ScalingSummary> in = TestSupport.summaries(SOURCE, 4, 5);
            Map<JobVertexID, ScalingSummary> out =
                    new PreflightScalingExecutor<String>().apply(ctx(daemon, flink).plugin("align-to-key-groups", "true").build(), in);
            eq(out.size(), 1, "still scales; log:\n" + log.all());
            ScalingSummary s = out.get(TestSupport.vertex(SOURCE));
            eq(s.getCurrentParallelism(), 4, "current");
            eq(s.getNewParallelism(), 8, "adjusted to the next parallelism that divides 128");
            check(s.getMetrics() == in.get(TestSupport.vertex(SOURCE)).getMetrics(), "metrics carried over");
            contains(log.all(), "Preflight ADJUST", "adjustment logged");
            show(log);
        }
    }

    static void unknownJob(Preflightd daemon, FakeFlinkRest flink) throws Exception {
        for (String policy : new String[] {"fail-closed", "fail-open"}) {
            try (LogCapture log = new LogCapture(PreflightScalingExecutor.class)) {
                Ctx c = ctx(daemon, flink).plugin("on-failure", policy);
                c.jobId = JobID.fromHexString("00000000000000000000000000000bad");
                Map<JobVertexID, ScalingSummary> in = TestSupport.summaries(SOURCE, 4, 8);
                Map<JobVertexID, ScalingSummary> out = new PreflightScalingExecutor<String>().apply(c.build(), in);
                if (policy.equals("fail-open")) {
                    check(out == in, "fail-open approves when the job is unknown; log:\n" + log.all());
                } else {
                    check(out.isEmpty(), "fail-closed vetoes when the job is unknown; log:\n" + log.all());
                }
                contains(log.all(), "Preflight could not check job", "the service's failure is logged");
                show(log);
            }
        }
    }
}
