package com.github.flinkpreflight.validator;

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
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
 * Calls preflightd's plain admission route, {@code POST /v1/admission/flink/resource}, with the
 * resource as the operator's mapper wrote it. The query carries the validator's failure policy
 * ({@code onFailure}) and 90% of its request timeout ({@code timeout}), so preflightd answers
 * (with that policy) before the validator gives up. The whole exchange, body included, is bounded
 * by the request timeout and {@link #MAX_ANSWER_BYTES}.
 */
final class AdmissionClient {

    static final String PATH = "v1/admission/flink/resource";
    /** Largest answer read; a denial with its vertices is a few KiB. */
    static final int MAX_ANSWER_BYTES = 1 << 20;

    /** preflightd's answer: {"allowed":…,"code":…,"message":…,"warnings":[…]}. */
    static final class Answer {
        final boolean allowed;
        final int code;
        final String message;
        final List<String> warnings;

        Answer(boolean allowed, int code, String message, List<String> warnings) {
            this.allowed = allowed;
            this.code = code;
            this.message = message;
            this.warnings = warnings;
        }

        static Answer parse(String text) throws Json.ParseException {
            Object o = Json.parse(text);
            if (!(o instanceof Map)) {
                throw new Json.ParseException("the answer is not a JSON object");
            }
            Map<?, ?> m = (Map<?, ?>) o;
            Object allowed = m.get("allowed");
            Object code = m.containsKey("code") ? m.get("code") : BigDecimal.ZERO;
            Object message = m.containsKey("message") ? m.get("message") : "";
            Object warnings = m.get("warnings");
            if (!(allowed instanceof Boolean)
                    || !(code instanceof BigDecimal)
                    || !(message instanceof String)
                    || !(warnings == null || warnings instanceof List)) {
                throw new Json.ParseException(
                        "the answer lacks a boolean 'allowed' or has a malformed code, message or warnings");
            }
            List<String> ws = new ArrayList<>();
            if (warnings != null) {
                for (Object w : (List<?>) warnings) {
                    ws.add(String.valueOf(w));
                }
            }
            boolean ok = (Boolean) allowed;
            String msg = (String) message;
            if (!ok && msg.isBlank()) {
                throw new Json.ParseException("a denial without a message");
            }
            return new Answer(ok, ((BigDecimal) code).intValue(), msg, ws);
        }
    }

    /** No usable answer: transport error, timeout, HTTP error or an unreadable answer. */
    static final class AdmissionException extends Exception {
        private static final long serialVersionUID = 1L;

        AdmissionException(String message) {
            super(message);
        }

        AdmissionException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final ConcurrentHashMap<Duration, HttpClient> clients = new ConcurrentHashMap<>();

    /** The route under the service URL's own path (a reverse-proxy prefix), with the query. */
    static URI endpoint(ValidatorConfig cfg) {
        String p = cfg.serviceUrl.getRawPath() == null ? "" : cfg.serviceUrl.getRawPath();
        if (!p.endsWith("/")) {
            p = p + "/";
        }
        long ms = Math.max(1, cfg.requestTimeout.toMillis() * 9 / 10);
        String query = "?onFailure=" + (cfg.failClosed ? "closed" : "open") + "&timeout=" + ms + "ms";
        return cfg.serviceUrl.resolve(p + PATH + query);
    }

    Answer admit(ValidatorConfig cfg, String resourceJson, String requestId)
            throws AdmissionException {
        URI uri = endpoint(cfg);
        HttpRequest http =
                HttpRequest.newBuilder(uri)
                        .timeout(cfg.requestTimeout)
                        .header("Content-Type", "application/json")
                        .header("Accept", "application/json")
                        .header("X-Request-Id", requestId)
                        .POST(HttpRequest.BodyPublishers.ofString(resourceJson, StandardCharsets.UTF_8))
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
        HttpResponse<byte[]> resp = send(client, http, cfg.requestTimeout);
        String text = new String(resp.body(), StandardCharsets.UTF_8);
        if (resp.statusCode() != 200) {
            String s = text.strip();
            throw new AdmissionException(
                    uri.getHost() + ":" + uri.getPort() + " answered HTTP " + resp.statusCode()
                            + (s.isEmpty() ? "" : ": " + (s.length() > 300 ? s.substring(0, 300) + "..." : s)));
        }
        try {
            return Answer.parse(text);
        } catch (Json.ParseException e) {
            throw new AdmissionException("unreadable answer from " + uri + ": " + e.getMessage(), e);
        }
    }

    private static HttpResponse<byte[]> send(HttpClient client, HttpRequest http, Duration timeout)
            throws AdmissionException {
        CompletableFuture<HttpResponse<byte[]>> future =
                client.sendAsync(http, info -> new LimitedBody(MAX_ANSWER_BYTES));
        URI uri = http.uri();
        try {
            // HttpRequest.timeout covers the wait for the headers; this bounds the body too.
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new AdmissionException("no answer from " + uri + " within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new AdmissionException("interrupted while waiting for " + uri, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            if (c instanceof java.net.http.HttpTimeoutException) {
                throw new AdmissionException(
                        "no answer from " + uri + " within the configured timeouts: " + c.getMessage(), c);
            }
            throw new AdmissionException(
                    "cannot reach " + uri + ": " + c.getClass().getSimpleName()
                            + (c.getMessage() == null ? "" : " " + c.getMessage()),
                    c);
        }
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
