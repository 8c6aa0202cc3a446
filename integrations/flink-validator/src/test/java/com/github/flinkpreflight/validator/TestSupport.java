package com.github.flinkpreflight.validator;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** A JUnit-free test runner, assertions, fixtures and fakes for the validator's tests. */
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

    // ---------------------------------------------------------------------------------------
    // Fixtures: the operator-shaped resources of internal/admission/testdata.

    static String fixture(String repoRoot, String name) throws IOException {
        Path p = Paths.get(repoRoot, "internal", "admission", "testdata", name);
        return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
    }

    /** The fixture with spec.flinkConfiguration["rest.port"] set, as a user sets the JobManager's port. */
    @SuppressWarnings("unchecked")
    static String withRestPort(String json, int port) throws Json.ParseException {
        Map<String, Object> doc = (Map<String, Object>) Json.parse(json);
        Map<String, Object> spec = (Map<String, Object>) doc.get("spec");
        Map<String, Object> conf = (Map<String, Object>) spec.computeIfAbsent("flinkConfiguration", k -> new LinkedHashMap<>());
        conf.put("rest.port", Integer.toString(port));
        return Json.write(doc);
    }

    /** Operator configuration with the validator's keys (without their prefix). */
    static Map<String, String> conf(String... keyValues) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("kubernetes.operator.reconcile.interval", "60 s"); // the operator's own keys are there too
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(ValidatorConfig.PREFIX + keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    /**
     * A class loader as Flink's plugin loader builds it (ComponentClassLoader): the jar's own
     * classes, {@code java.} from the platform, and only {@code org.apache.flink.} from the host
     * (the default parent-first patterns of the released operators; no com.fasterxml, no
     * io.fabric8).
     */
    static URLClassLoader pluginLoader(Path jar) throws IOException {
        ClassLoader host = TestSupport.class.getClassLoader();
        return new URLClassLoader(new URL[] {jar.toUri().toURL()}, ClassLoader.getPlatformClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.startsWith("org.apache.flink.")) {
                    return host.loadClass(name);
                }
                return super.loadClass(name, resolve);
            }
        };
    }

    // ---------------------------------------------------------------------------------------
    // A JDK HttpServer standing in for preflightd.

    /** A request the fake service saw. */
    static final class Seen {
        final String method;
        final String pathAndQuery;
        final Map<String, List<String>> headers;
        final String body;

        Seen(String method, String pathAndQuery, Map<String, List<String>> headers, String body) {
            this.method = method;
            this.pathAndQuery = pathAndQuery;
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
            Seen s = new Seen(ex.getRequestMethod(), ex.getRequestURI().toString(), new LinkedHashMap<>(ex.getRequestHeaders()), body);
            seen.add(s);
            Answer a = answer.apply(s);
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
    // Log capture (the validator logs through java.util.logging when SLF4J is absent, as here).

    static final class LogCapture extends Handler implements AutoCloseable {
        private final Logger logger = Logger.getLogger(PreflightValidator.class.getName());
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
