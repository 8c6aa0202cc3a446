package com.github.flinkpreflight.common;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * POSTs a JSON body to preflightd's HTTP face. One {@link HttpClient} per connect timeout is
 * shared by every call; the whole exchange, body included, is bounded by the request timeout and
 * the answer size given to the constructor. Redirects are not followed.
 */
final class JsonPost {

    /** An answer: its HTTP status and its body as text. */
    static final class Answer {
        final int status;
        final String body;

        Answer(int status, String body) {
            this.status = status;
            this.body = body;
        }
    }

    private final ConcurrentHashMap<Duration, HttpClient> clients = new ConcurrentHashMap<>();
    private final int maxAnswerBytes;

    JsonPost(int maxAnswerBytes) {
        this.maxAnswerBytes = maxAnswerBytes;
    }

    /** {@code route} under the base URL's own path (a reverse-proxy prefix). */
    static URI resolve(URI base, String route) {
        String p = base.getRawPath() == null ? "" : base.getRawPath();
        if (!p.endsWith("/")) {
            p = p + "/";
        }
        return base.resolve(p + route);
    }

    /**
     * Sends {@code body} to {@code uri} with JSON content headers and then {@code headers} (name,
     * value, name, value, …), and waits at most {@code requestTimeout} for the whole answer.
     */
    Answer post(URI uri, String body, Duration connectTimeout, Duration requestTimeout, String... headers)
            throws CallException {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(uri)
                        .timeout(requestTimeout)
                        .header("Content-Type", "application/json")
                        .header("Accept", "application/json");
        for (int i = 0; i + 1 < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        HttpRequest http = b.POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build();
        HttpClient client =
                clients.computeIfAbsent(
                        connectTimeout,
                        d ->
                                HttpClient.newBuilder()
                                        .connectTimeout(d)
                                        .version(HttpClient.Version.HTTP_1_1)
                                        .followRedirects(HttpClient.Redirect.NEVER)
                                        .build());
        HttpResponse<byte[]> resp = send(client, http, requestTimeout);
        return new Answer(resp.statusCode(), new String(resp.body(), StandardCharsets.UTF_8));
    }

    private HttpResponse<byte[]> send(HttpClient client, HttpRequest http, Duration timeout)
            throws CallException {
        CompletableFuture<HttpResponse<byte[]>> future =
                client.sendAsync(http, info -> new LimitedBody(maxAnswerBytes));
        URI uri = http.uri();
        try {
            // HttpRequest.timeout covers the wait for the headers; this bounds the body too.
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new CallException("no answer from " + uri + " within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new CallException("interrupted while waiting for " + uri, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            if (c instanceof java.net.http.HttpTimeoutException) {
                throw new CallException(
                        "no answer from " + uri + " within the configured timeouts: " + c.getMessage(), c);
            }
            throw new CallException(
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
