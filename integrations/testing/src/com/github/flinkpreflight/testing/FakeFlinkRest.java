package com.github.flinkpreflight.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A JobManager REST endpoint for one running job, with responses shaped like Flink 2.1's
 * (JobDetailsInfo with vertices, plan and stream graph, CheckpointingStatistics,
 * CheckpointConfigInfo, DashboardConfiguration). The job restored from, and has since only, the savepoint in
 * testdata/compact-sink. Shared by the end-to-end tests of integrations/flink-autoscaler and
 * integrations/flink-validator.
 */
public final class FakeFlinkRest implements AutoCloseable {

    // The vertices of the compact-sink job: a vertex's id is its chain head's operator id.
    public static final String SOURCE = "45b0254a46cabbc3efeea5d2e170ea5b"; // Source: orders -> streaming-writer
    public static final String COORDINATOR = "d7b11ad20303f98d3eb37a5e0525fff8"; // compact-coordinator
    public static final String COMPACT = "0d9ffb4f280d028d86dadba01ac205d7"; // compact-operator
    public static final String COMMITTER = "a004e297ed656c7b8e968e04069ca1a0"; // PartitionCommitter -> Sink: end

    final HttpServer server;
    /** Every request, "GET /jobs/…", in order. */
    public final List<String> requests = new CopyOnWriteArrayList<>();
    private final String savepointPath;
    private final String job;

    /** Serves job (32 hex digits) restored from, and since holding only, the savepoint folder. */
    public FakeFlinkRest(Path savepoint, String job) throws IOException {
        this.job = job;
        // Flink prints local paths as file: URIs with one slash.
        this.savepointPath = "file:" + savepoint;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        server.start();
    }

    /** http://127.0.0.1:PORT */
    public String url() {
        return "http://127.0.0.1:" + port();
    }

    public int port() {
        return server.getAddress().getPort();
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
        } else if (path.equals("/jobs/" + job)) {
            body = jobDetails();
        } else if (path.equals("/jobs/" + job + "/plan")) {
            body = "{\"plan\":" + plan() + "}";
        } else if (path.equals("/jobs/" + job + "/checkpoints")) {
            body = checkpoints();
        } else if (path.equals("/jobs/" + job + "/checkpoints/config")) {
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

    String plan() {
        return "{\"jid\":\"" + job + "\",\"name\":\"insert-into_default_catalog.default_database.fs_table\",\"type\":\"STREAMING\",\"nodes\":["
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

    String jobDetails() {
        long now = System.currentTimeMillis();
        return "{\"jid\":\"" + job + "\",\"name\":\"insert-into_default_catalog.default_database.fs_table\",\"isStoppable\":false,"
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
