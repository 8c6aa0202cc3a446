package com.github.flinkpreflight.autoscaler;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Calls {@code POST /v1/decide} on preflightd's HTTP/JSON face (grpc-gateway, protojson) through
 * one {@link JsonPost} shared by every job the operator scales; the whole exchange, body included,
 * is bounded by the request timeout and {@link #MAX_ANSWER_BYTES}.
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

    private final JsonPost http = new JsonPost(MAX_ANSWER_BYTES);

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

    Decision decide(AdapterConfig cfg, Request req, String requestId) throws CallException {
        URI uri = JsonPost.resolve(cfg.serviceUrl, "v1/decide");
        JsonPost.Answer resp =
                http.post(
                        uri,
                        requestBody(cfg, req),
                        cfg.connectTimeout,
                        cfg.requestTimeout,
                        "Grpc-Timeout",
                        grpcTimeout(cfg.requestTimeout),
                        "X-Request-Id",
                        requestId);
        if (resp.status != 200) {
            throw new CallException(uri + " answered HTTP " + resp.status + errorMessage(resp.body));
        }
        try {
            return Decision.parse(resp.body);
        } catch (Json.ParseException e) {
            throw new CallException("unreadable answer from " + uri + ": " + e.getMessage(), e);
        }
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
}
