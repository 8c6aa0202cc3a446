package com.github.flinkpreflight.autoscaler;

import static com.github.flinkpreflight.autoscaler.TestSupport.check;
import static com.github.flinkpreflight.autoscaler.TestSupport.contains;
import static com.github.flinkpreflight.autoscaler.TestSupport.eq;

import com.github.flinkpreflight.autoscaler.TestSupport.Ctx;
import com.github.flinkpreflight.autoscaler.TestSupport.LogCapture;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import org.apache.flink.api.common.JobID;
import org.apache.flink.autoscaler.ScalingSummary;
import org.apache.flink.runtime.jobgraph.JobVertexID;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.LogManager;

/**
 * The adapter against a real preflightd: the daemon is started on loopback, a fake Flink REST
 * endpoint (JDK HttpServer, responses shaped like Flink 2.1's REST API) reports a running job with
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
        try (FakeFlink flink = new FakeFlink(savepoint);
                Daemon daemon = Daemon.start(args[0], savepoint.getParent().toString(), flink.url())) {
            Map<String, TestSupport.Body> t = new LinkedHashMap<>();
            t.put("SafeScaleUpApproved", () -> safeScaleUp(daemon, flink));
            t.put("CompactOperatorScaleUpVetoed", () -> compactScaleUp(daemon, flink));
            t.put("MisalignedScaleUpAdjusted", () -> misaligned(daemon, flink));
            t.put("UnknownJobFollowsPolicy", () -> unknownJob(daemon, flink));
            failed = TestSupport.runAll("EndToEndTest", t);
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

    static Ctx ctx(Daemon daemon, FakeFlink flink) {
        Ctx c = new Ctx().plugin("url", daemon.url);
        c.key = "flink/orders-to-fs";
        c.jobId = JobID.fromHexString(JOB);
        c.restUrl = flink.url();
        return c;
    }

    static void safeScaleUp(Daemon daemon, FakeFlink flink) throws Exception {
        try (LogCapture log = new LogCapture()) {
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

    static void compactScaleUp(Daemon daemon, FakeFlink flink) throws Exception {
        try (LogCapture log = new LogCapture()) {
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

    static void misaligned(Daemon daemon, FakeFlink flink) throws Exception {
        try (LogCapture log = new LogCapture()) {
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

    static void unknownJob(Daemon daemon, FakeFlink flink) throws Exception {
        for (String policy : new String[] {"fail-closed", "fail-open"}) {
            try (LogCapture log = new LogCapture()) {
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

    // ---------------------------------------------------------------------------------------

    /** preflightd on loopback ports chosen by the kernel. */
    static final class Daemon implements AutoCloseable {
        final Process process;
        final String url;
        private final List<String> lines = new CopyOnWriteArrayList<>();

        private Daemon(Process process, String url) {
            this.process = process;
            this.url = url;
        }

        static Daemon start(String binary, String allowDir, String flinkUrl) throws Exception {
            List<String> cmd = new ArrayList<>(List.of(
                    binary,
                    "--grpc-addr", "127.0.0.1:0",
                    "--http-addr", "127.0.0.1:0",
                    "--allow", allowDir,
                    "--allow", flinkUrl + "/"));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            List<String> seen = new CopyOnWriteArrayList<>();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String httpAddr = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            String line;
            while (httpAddr == null && (line = out.readLine()) != null) {
                seen.add(line);
                if (line.startsWith("http-addr=")) {
                    httpAddr = line.substring("http-addr=".length()).trim();
                }
                if (System.nanoTime() > deadline) {
                    break;
                }
            }
            if (httpAddr == null) {
                p.destroyForcibly();
                throw new IllegalStateException("preflightd did not print its HTTP address:\n" + String.join("\n", seen));
            }
            Daemon d = new Daemon(p, "http://" + httpAddr);
            d.lines.addAll(seen);
            Thread drain = new Thread(() -> {
                try {
                    String l;
                    while ((l = out.readLine()) != null) {
                        d.lines.add(l);
                    }
                } catch (IOException ignored) {
                    // the process ended
                }
            }, "preflightd-log");
            drain.setDaemon(true);
            drain.start();
            return d;
        }

        String log() {
            return String.join("\n", lines);
        }

        @Override
        public void close() {
            process.destroy(); // SIGTERM: drain and stop
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A JobManager REST endpoint for one running job, with responses shaped like Flink 2.1's
     * (JobDetailsInfo with vertices, plan and stream graph, CheckpointingStatistics,
     * CheckpointConfigInfo, DashboardConfiguration). The job restored from, and has since only, the savepoint in
     * testdata/compact-sink.
     */
    static final class FakeFlink implements AutoCloseable {
        final HttpServer server;
        final List<String> requests = new CopyOnWriteArrayList<>();
        private final String savepointPath;

        FakeFlink(Path savepoint) throws IOException {
            // Flink prints local paths as file: URIs with one slash.
            this.savepointPath = "file:" + savepoint;
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", this::handle);
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }

        private void handle(HttpExchange ex) throws IOException {
            String path = ex.getRequestURI().getPath();
            requests.add(ex.getRequestMethod() + " " + ex.getRequestURI());
            String body;
            int status = 200;
            if (!ex.getRequestMethod().equals("GET")) {
                status = 405;
                body = "{\"errors\":[\"Not allowed.\"]}";
            } else if (path.equals("/config")) {
                body = config();
            } else if (path.equals("/jobs/" + JOB)) {
                body = jobDetails();
            } else if (path.equals("/jobs/" + JOB + "/plan")) {
                body = "{\"plan\":" + plan() + "}";
            } else if (path.equals("/jobs/" + JOB + "/checkpoints")) {
                body = checkpoints();
            } else if (path.equals("/jobs/" + JOB + "/checkpoints/config")) {
                body = checkpointConfig();
            } else if (path.startsWith("/jobs/")) {
                status = 404;
                String id = path.substring("/jobs/".length()).split("/")[0];
                body = "{\"errors\":[\"org.apache.flink.runtime.rest.NotFoundException: Job " + id + " not found\\n\\tat ...\"]}";
            } else {
                status = 404;
                body = "{\"errors\":[\"Not found: " + path + "\"]}";
            }
            byte[] out = body.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json; charset=UTF-8");
            ex.sendResponseHeaders(status, out.length);
            try (OutputStream os = ex.getResponseBody()) {
                os.write(out);
            }
        }

        static String config() {
            return "{\"refresh-interval\":3000,\"timezone-name\":\"Coordinated Universal Time\",\"timezone-offset\":0,"
                    + "\"flink-version\":\"2.1.0\",\"flink-revision\":\"4cb6bd3 @ 2025-07-24T10:12:37+02:00\","
                    + "\"features\":{\"web-submit\":false,\"web-cancel\":false,\"web-rescale\":false,\"web-history\":false}}";
        }

        static String vertex(String id, String name, int parallelism, int max, long now) {
            return "{\"id\":\"" + id + "\",\"slotSharingGroupId\":\"a6a8d0f5c2a3e0b8a9a1b2c3d4e5f607\",\"name\":\"" + name + "\","
                    + "\"maxParallelism\":" + max + ",\"parallelism\":" + parallelism + ",\"status\":\"RUNNING\","
                    + "\"start-time\":" + (now - 600_000) + ",\"end-time\":-1,\"duration\":600000,"
                    + "\"tasks\":{\"RUNNING\":" + parallelism + "},"
                    + "\"metrics\":{\"read-bytes\":0,\"read-bytes-complete\":true,\"write-bytes\":0,\"write-bytes-complete\":true,"
                    + "\"read-records\":0,\"read-records-complete\":true,\"write-records\":0,\"write-records-complete\":true,"
                    + "\"accumulated-backpressured-time\":0,\"accumulated-idle-time\":0,\"accumulated-busy-time\":\"NaN\"}}";
        }

        static String node(String id, int parallelism, String description, String... inputs) {
            StringBuilder in = new StringBuilder();
            for (int i = 0; i < inputs.length; i++) {
                in.append(i > 0 ? "," : "").append("{\"num\":").append(i).append(",\"id\":\"").append(inputs[i])
                        .append("\",\"ship_strategy\":\"REBALANCE\",\"exchange\":\"pipelined_bounded\"}");
            }
            return "{\"id\":\"" + id + "\",\"parallelism\":" + parallelism + ",\"operator\":\"\",\"operator_strategy\":\"\","
                    + "\"description\":\"" + description + "\"" + (inputs.length > 0 ? ",\"inputs\":[" + in + "]" : "")
                    + ",\"optimizer_properties\":{}}";
        }

        static String plan() {
            return "{\"jid\":\"" + JOB + "\",\"name\":\"insert-into_default_catalog.default_database.fs_table\",\"type\":\"STREAMING\",\"nodes\":["
                    + node(SOURCE, 4, "Source: orders -> streaming-writer") + ","
                    + node(COORDINATOR, 1, "compact-coordinator", SOURCE) + ","
                    + node(COMPACT, 4, "compact-operator", COORDINATOR) + ","
                    + node(COMMITTER, 1, "PartitionCommitter -> Sink: end", COMPACT)
                    + "]}";
        }

        static String streamNode(int id, int parallelism, String name, String vertex, int forwardFrom) {
            return "{\"id\":\"" + id + "\",\"parallelism\":" + parallelism + ",\"operator\":\"" + name + "\",\"description\":\"" + name
                    + "\",\"job_vertex_id\":\"" + vertex + "\",\"inputs\":["
                    + (forwardFrom > 0 ? "{\"num\":0,\"id\":\"" + forwardFrom + "\",\"ship_strategy\":\"FORWARD\",\"exchange\":\"UNDEFINED\"}" : "")
                    + "]}";
        }

        /** Flink 2.x lists every operator with its vertex: the chains, without guessing from names. */
        static String streamGraph() {
            return "{\"nodes\":["
                    + streamNode(1, 4, "Source: orders", SOURCE, 0) + ","
                    + streamNode(2, 4, "streaming-writer", SOURCE, 1) + ","
                    + streamNode(3, 1, "compact-coordinator", COORDINATOR, 0) + ","
                    + streamNode(4, 4, "compact-operator", COMPACT, 0) + ","
                    + streamNode(5, 1, "PartitionCommitter", COMMITTER, 0) + ","
                    + streamNode(6, 1, "Sink: end", COMMITTER, 5)
                    + "]}";
        }

        static String jobDetails() {
            long now = System.currentTimeMillis();
            return "{\"jid\":\"" + JOB + "\",\"name\":\"insert-into_default_catalog.default_database.fs_table\",\"isStoppable\":false,"
                    + "\"state\":\"RUNNING\",\"job-type\":\"STREAMING\",\"start-time\":" + (now - 600_000) + ",\"end-time\":-1,"
                    + "\"duration\":600000,\"maxParallelism\":-1,\"now\":" + now + ","
                    + "\"timestamps\":{\"RUNNING\":" + (now - 599_000) + ",\"CREATED\":" + (now - 600_000) + ",\"INITIALIZING\":" + (now - 600_000) + "},"
                    + "\"vertices\":["
                    + vertex(SOURCE, "Source: orders -> streaming-writer", 4, 128, now) + ","
                    + vertex(COORDINATOR, "compact-coordinator", 1, 1, now) + ","
                    + vertex(COMPACT, "compact-operator", 4, 128, now) + ","
                    + vertex(COMMITTER, "PartitionCommitter -> Sink: end", 1, 1, now)
                    + "],\"status-counts\":{\"RUNNING\":4,\"CREATED\":0,\"FINISHED\":0,\"CANCELED\":0,\"CANCELING\":0,\"FAILED\":0,"
                    + "\"RECONCILING\":0,\"INITIALIZING\":0,\"SCHEDULED\":0,\"DEPLOYING\":0},"
                    + "\"plan\":" + plan() + ",\"stream-graph\":" + streamGraph() + ",\"pending-operators\":0}";
        }

        String checkpoints() {
            long now = System.currentTimeMillis();
            String savepoint = "{\"className\":\"completed\",\"id\":1742,\"status\":\"COMPLETED\",\"is_savepoint\":true,"
                    + "\"savepointFormat\":\"CANONICAL\",\"trigger_timestamp\":" + (now - 180_000) + ",\"latest_ack_timestamp\":" + (now - 179_000) + ","
                    + "\"checkpointed_size\":11981,\"state_size\":11981,\"end_to_end_duration\":1000,\"alignment_buffered\":0,"
                    + "\"processed_data\":0,\"persisted_data\":0,\"num_subtasks\":10,\"num_acknowledged_subtasks\":10,"
                    + "\"checkpoint_type\":\"SAVEPOINT\",\"tasks\":{},\"external_path\":\"" + savepointPath + "\",\"discarded\":false}";
            return "{\"counts\":{\"restored\":1,\"total\":1,\"in_progress\":0,\"completed\":1,\"failed\":0},"
                    + "\"summary\":{},"
                    + "\"latest\":{\"completed\":null,\"savepoint\":" + savepoint + ",\"failed\":null,"
                    + "\"restored\":{\"id\":1742,\"restore_timestamp\":" + (now - 600_000) + ",\"is_savepoint\":true,\"external_path\":\"" + savepointPath + "\"}},"
                    + "\"history\":[" + savepoint + "]}";
        }

        static String checkpointConfig() {
            return "{\"mode\":\"exactly_once\",\"interval\":60000,\"timeout\":600000,\"min_pause\":0,\"max_concurrent\":1,"
                    + "\"externalization\":{\"enabled\":true,\"delete_on_cancellation\":false},"
                    + "\"state_backend\":\"HashMapStateBackend\",\"checkpoint_storage\":\"FileSystemCheckpointStorage\","
                    + "\"unaligned_checkpoints\":false,\"tolerable_failed_checkpoints\":0,\"aligned_checkpoint_timeout\":0,"
                    + "\"checkpoints_after_tasks_finish\":true,\"state_changelog_enabled\":false,"
                    + "\"changelog_periodic_materialization_interval\":600000,\"changelog_storage\":\"memory\"}";
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }
}
