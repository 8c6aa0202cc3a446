package com.github.flinkpreflight.validator;

import java.math.BigDecimal;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Calls preflightd's plain admission route, {@code POST /v1/admission/flink/resource}, with the
 * resource as the operator's mapper wrote it. The query carries the validator's failure policy
 * ({@code onFailure}) and 90% of its request timeout ({@code timeout}), so preflightd answers
 * (with that policy) before the validator gives up. The whole exchange ({@link JsonPost}), body
 * included, is bounded by the request timeout and {@link #MAX_ANSWER_BYTES}.
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
            Map<?, ?> m = Json.parseObject(text, "the answer");
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

    private final JsonPost http = new JsonPost(MAX_ANSWER_BYTES);

    /** The route under the service URL's own path (a reverse-proxy prefix), with the query. */
    static URI endpoint(ValidatorConfig cfg) {
        long ms = Math.max(1, cfg.requestTimeout.toMillis() * 9 / 10);
        String query = "?onFailure=" + (cfg.failClosed ? "closed" : "open") + "&timeout=" + ms + "ms";
        return JsonPost.resolve(cfg.serviceUrl, PATH + query);
    }

    Answer admit(ValidatorConfig cfg, String resourceJson, String requestId)
            throws CallException {
        URI uri = endpoint(cfg);
        JsonPost.Answer resp =
                http.post(uri, resourceJson, cfg.connectTimeout, cfg.requestTimeout, "X-Request-Id", requestId);
        if (resp.status != 200) {
            String s = resp.body.strip();
            throw new CallException(
                    uri.getHost() + ":" + uri.getPort() + " answered HTTP " + resp.status
                            + (s.isEmpty() ? "" : ": " + (s.length() > 300 ? s.substring(0, 300) + "..." : s)));
        }
        try {
            return Answer.parse(resp.body);
        } catch (Json.ParseException e) {
            throw new CallException("unreadable answer from " + uri + ": " + e.getMessage(), e);
        }
    }
}
