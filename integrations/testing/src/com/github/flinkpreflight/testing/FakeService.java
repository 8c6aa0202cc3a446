package com.github.flinkpreflight.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * A JDK HttpServer on loopback standing in for preflightd: it records every request and answers
 * with what {@link #answer} returns for it; given a route, it answers anything but a POST to that
 * route with grpc-gateway's 404 body.
 */
public final class FakeService implements AutoCloseable {

    /** A request the fake service saw. */
    public static final class Seen {
        public final String method;
        /** The request target without the query. */
        public final String path;
        /** The request target with the query. */
        public final String pathAndQuery;
        public final Map<String, List<String>> headers;
        public final String body;

        Seen(String method, String path, String pathAndQuery, Map<String, List<String>> headers, String body) {
            this.method = method;
            this.path = path;
            this.pathAndQuery = pathAndQuery;
            this.headers = headers;
            this.body = body;
        }

        public String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }
    }

    /** An answer: HTTP status, body, and a delay before answering. */
    public static final class Answer {
        final int status;
        final String body;
        final long delayMillis;

        public Answer(int status, String body, long delayMillis) {
            this.status = status;
            this.body = body;
            this.delayMillis = delayMillis;
        }

        public static Answer ok(String body) {
            return new Answer(200, body, 0);
        }
    }

    final HttpServer server;
    private final String route;
    public final List<Seen> seen = new CopyOnWriteArrayList<>();
    public volatile Function<Seen, Answer> answer = s -> new Answer(500, "{}", 0);

    /** A fake that answers every request with {@link #answer}. */
    public FakeService() throws IOException {
        this(null);
    }

    /** A fake that answers POSTs to {@code route} with {@link #answer}, anything else with 404. */
    public FakeService(String route) throws IOException {
        this.route = route;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "fake-preflightd");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/", this::handle);
        server.start();
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private void handle(HttpExchange ex) throws IOException {
        String body;
        try (InputStream in = ex.getRequestBody()) {
            body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Seen s = new Seen(ex.getRequestMethod(), ex.getRequestURI().getPath(), ex.getRequestURI().toString(),
                new LinkedHashMap<>(ex.getRequestHeaders()), body);
        seen.add(s);
        Answer a;
        if (route != null && !(s.method.equals("POST") && s.path.equals(route))) {
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
