package com.github.flinkpreflight.autoscaler;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.autoscaler.JobAutoScalerContext;
import org.apache.flink.autoscaler.ScalingExecutorPlugin;
import org.apache.flink.autoscaler.ScalingSummary;
import org.apache.flink.autoscaler.metrics.EvaluatedScalingMetric;
import org.apache.flink.autoscaler.metrics.ScalingMetric;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobVertexID;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** A JUnit-free test runner, assertions, and fakes for the adapter's tests. */
final class TestSupport {

    private TestSupport() {}

    /** A named test body. */
    interface Body {
        void run() throws Exception;
    }

    /** Runs the tests in order, prints one line each, and returns the number that failed. */
    static int runAll(String suite, Map<String, Body> tests) {
        int failed = 0;
        for (Map.Entry<String, Body> t : tests.entrySet()) {
            long start = System.nanoTime();
            try {
                t.getValue().run();
                System.out.printf("ok   %s/%s (%d ms)%n", suite, t.getKey(), (System.nanoTime() - start) / 1_000_000);
            } catch (Throwable e) {
                failed++;
                System.out.printf("FAIL %s/%s: %s%n", suite, t.getKey(), e);
                e.printStackTrace(System.out);
            }
        }
        System.out.printf("%s: %d passed, %d failed%n", suite, tests.size() - failed, failed);
        return failed;
    }

    static void check(boolean cond, String what) {
        if (!cond) {
            throw new AssertionError(what);
        }
    }

    static void eq(Object actual, Object expected, String what) {
        if (!Objects.equals(actual, expected)) {
            throw new AssertionError(what + ": got <" + actual + ">, want <" + expected + ">");
        }
    }

    static void contains(String haystack, String needle, String what) {
        if (haystack == null || !haystack.contains(needle)) {
            throw new AssertionError(what + ": <" + haystack + "> does not contain <" + needle + ">");
        }
    }

    /** Runs body and returns the exception of type t it throws; fails if it throws none. */
    static <T extends Throwable> T expectThrows(Class<T> t, Body body, String what) {
        try {
            body.run();
        } catch (Throwable e) {
            if (t.isInstance(e)) {
                return t.cast(e);
            }
            throw new AssertionError(what + ": threw " + e + ", want " + t.getSimpleName(), e);
        }
        throw new AssertionError(what + ": threw nothing, want " + t.getSimpleName());
    }

    // ---------------------------------------------------------------------------------------
    // Flink-side fixtures

    static JobVertexID vertex(String hex) {
        return JobVertexID.fromHexString(hex);
    }

    static Map<ScalingMetric, EvaluatedScalingMetric> metrics(double tpr) {
        Map<ScalingMetric, EvaluatedScalingMetric> m = new EnumMap<>(ScalingMetric.class);
        m.put(ScalingMetric.TRUE_PROCESSING_RATE, EvaluatedScalingMetric.avg(tpr));
        return m;
    }

    /** Summaries in the given order: vertex hex, current, new, alternating. */
    static Map<JobVertexID, ScalingSummary> summaries(Object... hexCurrentNew) {
        Map<JobVertexID, ScalingSummary> m = new LinkedHashMap<>();
        for (int i = 0; i < hexCurrentNew.length; i += 3) {
            int cur = (Integer) hexCurrentNew[i + 1];
            int nw = (Integer) hexCurrentNew[i + 2];
            m.put(vertex((String) hexCurrentNew[i]), new ScalingSummary(cur, nw, metrics(100.0 * (i + 1))));
        }
        return m;
    }

    /** A REST client whose address is fixed and whose close() is counted. */
    static final class FakeRestClient extends RestClusterClient<String> {
        final String url;
        final AtomicInteger closed;

        FakeRestClient(String url, AtomicInteger closed) throws Exception {
            super(new Configuration(), "test-cluster");
            this.url = url;
            this.closed = closed;
        }

        @Override
        public String getWebInterfaceURL() {
            return url;
        }

        @Override
        public void close() {
            closed.incrementAndGet();
        }
    }

    /** What a plugin context needs, set up the way the operator does it. */
    static final class Ctx {
        String key = "flink-ns/my-job";
        JobID jobId = JobID.fromHexString("0123456789abcdef0123456789abcdef");
        String restUrl = "http://my-job-rest.flink-ns:8081";
        final Map<String, String> jobConf = new LinkedHashMap<>();
        final Map<String, String> pluginConf = new LinkedHashMap<>();
        final AtomicInteger restClientsOpened = new AtomicInteger();
        final AtomicInteger restClientsClosed = new AtomicInteger();

        Ctx plugin(String k, String v) {
            pluginConf.put(k, v);
            return this;
        }

        Ctx job(String k, String v) {
            jobConf.put(k, v);
            return this;
        }

        ScalingExecutorPlugin.Context<String> build() {
            JobAutoScalerContext<String> base =
                    new JobAutoScalerContext<>(
                            key,
                            jobId,
                            JobStatus.RUNNING,
                            Configuration.fromMap(jobConf),
                            null,
                            () -> {
                                restClientsOpened.incrementAndGet();
                                return new FakeRestClient(restUrl, restClientsClosed);
                            });
            return new ScalingExecutorPlugin.Context<>(base, Configuration.fromMap(pluginConf));
        }
    }

    // ---------------------------------------------------------------------------------------
    // A fake preflightd: POST /v1/decide answers what the test says.

    /** One recorded request. */
    static final class Seen {
        final String method;
        final String path;
        final Map<String, List<String>> headers;
        final String body;

        Seen(String method, String path, Map<String, List<String>> headers, String body) {
            this.method = method;
            this.path = path;
            this.headers = headers;
            this.body = body;
        }

        String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> json() throws Json.ParseException {
            return (Map<String, Object>) Json.parse(body);
        }
    }

    /** An answer: HTTP status, body, and a delay before answering. */
    static final class Answer {
        final int status;
        final String body;
        final long delayMillis;

        Answer(int status, String body, long delayMillis) {
            this.status = status;
            this.body = body;
            this.delayMillis = delayMillis;
        }

        static Answer ok(String body) {
            return new Answer(200, body, 0);
        }
    }

    static final class FakeService implements AutoCloseable {
        final HttpServer server;
        final List<Seen> seen = new CopyOnWriteArrayList<>();
        volatile Function<Seen, Answer> answer = s -> new Answer(500, "{}", 0);

        FakeService() throws IOException {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.setExecutor(Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "fake-preflightd");
                t.setDaemon(true);
                return t;
            }));
            server.createContext("/", this::handle);
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }

        private void handle(HttpExchange ex) throws IOException {
            String body;
            try (InputStream in = ex.getRequestBody()) {
                body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            Seen s = new Seen(ex.getRequestMethod(), ex.getRequestURI().getPath(), new LinkedHashMap<>(ex.getRequestHeaders()), body);
            seen.add(s);
            Answer a;
            if (!s.method.equals("POST") || !s.path.equals("/v1/decide")) {
                a = new Answer(404, "{\"code\":5,\"message\":\"Not Found\",\"details\":[]}", 0);
            } else {
                a = answer.apply(s);
            }
            try {
                if (a.delayMillis > 0) {
                    Thread.sleep(a.delayMillis);
                }
                byte[] out = a.body.getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "application/json");
                ex.sendResponseHeaders(a.status, out.length);
                try (OutputStream os = ex.getResponseBody()) {
                    os.write(out);
                }
            } catch (InterruptedException | IOException e) {
                ex.close(); // the client gave up
            }
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Log capture (the adapter logs through java.util.logging when SLF4J is absent, as here).

    static final class LogCapture extends Handler implements AutoCloseable {
        private final Logger logger = Logger.getLogger(PreflightScalingExecutor.class.getName());
        final List<LogRecord> records = new CopyOnWriteArrayList<>();

        LogCapture() {
            logger.addHandler(this);
        }

        @Override
        public void publish(LogRecord r) {
            records.add(r);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {
            logger.removeHandler(this);
        }

        String all() {
            List<String> l = new ArrayList<>();
            for (LogRecord r : records) {
                l.add(r.getLevel() + " " + r.getMessage());
            }
            return String.join("\n", l);
        }
    }
}
