package com.github.flinkpreflight.autoscaler;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Calls {@code POST /v1/decide} on preflightd's HTTP/JSON face (grpc-gateway, protojson). One
 * {@link HttpClient} per connect timeout is shared by every job the operator scales; the whole
 * exchange, body included, is bounded by the request timeout and {@link #MAX_ANSWER_BYTES}.
 */
final class DecideClient {

    /** Largest answer read; a decision with all its findings is a few KiB. */
    static final int MAX_ANSWER_BYTES = 8 << 20;

    /** The request as the service sees it, built by the plugin. */
    static final class Request {
        final String flinkRestUrl;
        final String jobId;
        /** Proposed parallelism by JobVertexID hex, in the autoscaler's order. */
        final Map<String, Integer> proposed;

        Request(String flinkRestUrl, String jobId, Map<String, Integer> proposed) {
            this.flinkRestUrl = flinkRestUrl;
            this.jobId = jobId;
            this.proposed = proposed;
        }
    }

    /** No usable decision: transport error, timeout, HTTP error or an unreadable answer. */
    static final class DecideException extends Exception {
        private static final long serialVersionUID = 1L;

        DecideException(String message) {
            super(message);
        }

        DecideException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final ConcurrentHashMap<Duration, HttpClient> clients = new ConcurrentHashMap<>();

    /** The DecideRequest JSON (protojson names; enums by name; int64 as a string). */
    static String requestBody(AdapterConfig cfg, Request req) {
        Map<String, Object> body = new LinkedHashMap<>();
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("restUrl", req.flinkRestUrl);
        job.put("jobId", req.jobId);
        body.put("job", job);
        body.put("proposedParallelism", req.proposed);
        Map<String, Object> options = new LinkedHashMap<>();
        if (!cfg.flinkVersion.isEmpty()) {
            options.put("flinkVersion", cfg.flinkVersion);
        }
        if (cfg.rpcFrameSizeBytes > 0) {
            options.put("rpcFrameSizeBytes", Long.toString(cfg.rpcFrameSizeBytes));
        }
        if (!options.isEmpty()) {
            body.put("options", options);
        }
        body.put("onFailure", cfg.onFailure.protoName);
        if (cfg.alignToKeyGroups) {
            body.put("alignToKeyGroups", true);
        }
        return Json.write(body);
    }

    /**
     * grpc-gateway turns {@code Grpc-Timeout} into the RPC deadline. Ask for 90% of our own
     * timeout, so that the service answers (possibly with its failure policy) before we give up.
     * The header takes at most 8 digits.
     */
    static String grpcTimeout(Duration requestTimeout) {
        long ms = Math.max(1, requestTimeout.toMillis() * 9 / 10);
        return ms <= 99_999_999L ? ms + "m" : Math.min(ms / 1000, 99_999_999L) + "S";
    }

    Decision decide(AdapterConfig cfg, Request req, String requestId) throws DecideException {
        URI uri = cfg.serviceUrl.resolve(endpointPath(cfg.serviceUrl));
        HttpRequest http =
                HttpRequest.newBuilder(uri)
                        .timeout(cfg.requestTimeout)
                        .header("Content-Type", "application/json")
                        .header("Accept", "application/json")
                        .header("Grpc-Timeout", grpcTimeout(cfg.requestTimeout))
                        .header("X-Request-Id", requestId)
                        .POST(
                                HttpRequest.BodyPublishers.ofString(
                                        requestBody(cfg, req), StandardCharsets.UTF_8))
                        .build();
        HttpClient client =
                clients.computeIfAbsent(
                        cfg.connectTimeout,
                        d ->
                                HttpClient.newBuilder()
                                        .connectTimeout(d)
                                        .version(HttpClient.Version.HTTP_1_1)
                                        .followRedirects(HttpClient.Redirect.NEVER)
                                        .build());
        CompletableFuture<HttpResponse<byte[]>> future =
                client.sendAsync(http, info -> new LimitedBody(MAX_ANSWER_BYTES));
        HttpResponse<byte[]> resp;
        try {
            // HttpRequest.timeout covers the wait for the headers; this bounds the body too.
            resp = future.get(cfg.requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new DecideException(
                    "no answer from " + uri + " within " + cfg.requestTimeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new DecideException("interrupted while waiting for " + uri, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            if (c instanceof java.net.http.HttpTimeoutException) {
                throw new DecideException(
                        "no answer from " + uri + " within the configured timeouts: " + c.getMessage(), c);
            }
            throw new DecideException(
                    "cannot reach " + uri + ": " + c.getClass().getSimpleName() + describe(c), c);
        }
        String text = new String(resp.body(), StandardCharsets.UTF_8);
        if (resp.statusCode() != 200) {
            throw new DecideException(
                    uri + " answered HTTP " + resp.statusCode() + errorMessage(text));
        }
        try {
            return Decision.parse(text);
        } catch (Json.ParseException e) {
            throw new DecideException("unreadable answer from " + uri + ": " + e.getMessage(), e);
        }
    }

    /** The service URL's own path (a reverse-proxy prefix) followed by v1/decide. */
    private static String endpointPath(URI base) {
        String p = base.getRawPath() == null ? "" : base.getRawPath();
        if (!p.endsWith("/")) {
            p = p + "/";
        }
        return p + "v1/decide";
    }

    private static String describe(Throwable c) {
        return c.getMessage() == null ? "" : " " + c.getMessage();
    }

    /** The gateway's error body is a google.rpc.Status: {"code":N,"message":"...","details":[]}. */
    static String errorMessage(String body) {
        try {
            Object o = Json.parse(body);
            if (o instanceof Map) {
                Object msg = ((Map<?, ?>) o).get("message");
                Object code = ((Map<?, ?>) o).get("code");
                if (msg instanceof String) {
                    return (code != null ? " (gRPC code " + code + ")" : "") + ": " + msg;
                }
            }
        } catch (Json.ParseException ignored) {
            // not a gateway error body: show the start of it
        }
        String s = body.strip();
        return s.isEmpty() ? "" : ": " + (s.length() > 300 ? s.substring(0, 300) + "..." : s);
    }

    /** Collects a body up to a limit and fails beyond it, so a runaway answer cannot fill memory. */
    private static final class LimitedBody implements HttpResponse.BodySubscriber<byte[]> {
        private final int limit;
        private final ByteArrayOutputStream buf = new ByteArrayOutputStream();
        private final CompletableFuture<byte[]> result = new CompletableFuture<>();
        private Flow.Subscription subscription;
        private boolean tooLarge;

        LimitedBody(int limit) {
            this.limit = limit;
        }

        @Override
        public CompletionStage<byte[]> getBody() {
            return result;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            if (tooLarge) {
                return;
            }
            for (ByteBuffer b : items) {
                if (buf.size() + b.remaining() > limit) {
                    tooLarge = true;
                    subscription.cancel();
                    result.completeExceptionally(
                            new java.io.IOException("answer larger than " + limit + " bytes"));
                    return;
                }
                byte[] chunk = new byte[b.remaining()];
                b.get(chunk);
                buf.write(chunk, 0, chunk.length);
            }
        }

        @Override
        public void onError(Throwable t) {
            result.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            result.complete(buf.toByteArray());
        }
    }
}
