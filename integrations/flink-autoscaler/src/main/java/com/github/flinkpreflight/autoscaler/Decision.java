package com.github.flinkpreflight.autoscaler;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The service's {@code DecideResponse} (POST /v1/decide, protojson), reduced to what the adapter
 * acts on and logs. Parsing follows protojson: absent fields have their zero value, enums come as
 * names (numbers are accepted too), int32 as JSON numbers (strings accepted too), and unknown
 * fields are ignored so that a newer server does not break an older adapter.
 */
final class Decision {

    /** preflight.v1.DecisionAction. */
    enum Action {
        UNSPECIFIED,
        APPROVE,
        ADJUST,
        VETO;

        static Action parse(Object v) throws Json.ParseException {
            if (v == null) {
                return UNSPECIFIED;
            }
            if (v instanceof BigDecimal) {
                int n = toInt(v, "action");
                return n >= 0 && n < values().length ? values()[n] : UNSPECIFIED;
            }
            if (!(v instanceof String)) {
                throw new Json.ParseException("action is not an enum name");
            }
            switch ((String) v) {
                case "DECISION_ACTION_APPROVE":
                    return APPROVE;
                case "DECISION_ACTION_ADJUST":
                    return ADJUST;
                case "DECISION_ACTION_VETO":
                    return VETO;
                default:
                    return UNSPECIFIED; // includes DECISION_ACTION_UNSPECIFIED and newer values
            }
        }
    }

    /** One proposed vertex's decision, for the logs. */
    static final class Vertex {
        final String vertexId;
        final String name;
        final int currentParallelism;
        final int proposedParallelism;
        final Action action;
        final int parallelism;
        final List<String> findingIds;
        final String reason;

        Vertex(
                String vertexId,
                String name,
                int currentParallelism,
                int proposedParallelism,
                Action action,
                int parallelism,
                List<String> findingIds,
                String reason) {
            this.vertexId = vertexId;
            this.name = name;
            this.currentParallelism = currentParallelism;
            this.proposedParallelism = proposedParallelism;
            this.action = action;
            this.parallelism = parallelism;
            this.findingIds = findingIds;
            this.reason = reason;
        }

        /** E.g. {@code 0a1b... (compact-operator) 4 -> 8: VETO [PF101] new subtasks 4-7 ...}. */
        String describe() {
            StringBuilder sb = new StringBuilder(vertexId);
            if (!name.isEmpty()) {
                sb.append(" (").append(name).append(')');
            }
            sb.append(' ').append(currentParallelism).append(" -> ").append(proposedParallelism);
            sb.append(": ").append(action);
            if (action == Action.ADJUST) {
                sb.append(" to ").append(parallelism);
            }
            if (!findingIds.isEmpty()) {
                sb.append(' ').append(findingIds);
            }
            if (!reason.isEmpty()) {
                sb.append(' ').append(reason);
            }
            return sb.toString();
        }
    }

    final Action action;
    final List<Vertex> vertices;
    /** Decided parallelism by lowercase vertex id. */
    final Map<String, Integer> parallelism;

    final String checkpoint;
    final String checkpointNote;
    final boolean failed;
    final String failure;

    private Decision(
            Action action,
            List<Vertex> vertices,
            Map<String, Integer> parallelism,
            String checkpoint,
            String checkpointNote,
            boolean failed,
            String failure) {
        this.action = action;
        this.vertices = vertices;
        this.parallelism = parallelism;
        this.checkpoint = checkpoint;
        this.checkpointNote = checkpointNote;
        this.failed = failed;
        this.failure = failure;
    }

    static Decision parse(String body) throws Json.ParseException {
        Map<?, ?> m = Json.parseObject(body, "the answer");
        Map<String, Integer> parallelism = new LinkedHashMap<>();
        Object p = m.get("parallelism");
        if (p != null) {
            if (!(p instanceof Map)) {
                throw new Json.ParseException("parallelism is not an object");
            }
            for (Map.Entry<?, ?> e : ((Map<?, ?>) p).entrySet()) {
                String key = ((String) e.getKey()).toLowerCase(Locale.ROOT);
                parallelism.put(key, toInt(e.getValue(), "parallelism." + e.getKey()));
            }
        }
        List<Vertex> vertices = new ArrayList<>();
        for (Object o : Json.arrayOrEmpty(m.get("vertices"), "vertices")) {
            if (!(o instanceof Map)) {
                throw new Json.ParseException("a vertex is not an object");
            }
            vertices.add(vertex((Map<?, ?>) o));
        }
        return new Decision(
                Action.parse(m.get("action")),
                Collections.unmodifiableList(vertices),
                Collections.unmodifiableMap(parallelism),
                str(m.get("checkpoint"), "checkpoint"),
                str(m.get("checkpointNote"), "checkpointNote"),
                bool(m.get("failed"), "failed"),
                str(m.get("failure"), "failure"));
    }

    private static Vertex vertex(Map<?, ?> v) throws Json.ParseException {
        List<String> ids = new ArrayList<>();
        for (Object o : Json.arrayOrEmpty(v.get("findingIds"), "findingIds")) {
            ids.add(str(o, "findingIds[]"));
        }
        return new Vertex(
                str(v.get("vertexId"), "vertexId"),
                str(v.get("name"), "name"),
                toInt(v.get("currentParallelism"), "currentParallelism"),
                toInt(v.get("proposedParallelism"), "proposedParallelism"),
                Action.parse(v.get("action")),
                toInt(v.get("parallelism"), "parallelism"),
                Collections.unmodifiableList(ids),
                str(v.get("reason"), "reason"));
    }

    private static String str(Object v, String field) throws Json.ParseException {
        if (v == null) {
            return "";
        }
        if (!(v instanceof String)) {
            throw new Json.ParseException(field + " is not a string");
        }
        return (String) v;
    }

    private static boolean bool(Object v, String field) throws Json.ParseException {
        if (v == null) {
            return false;
        }
        if (!(v instanceof Boolean)) {
            throw new Json.ParseException(field + " is not a boolean");
        }
        return (Boolean) v;
    }

    /** An int32 field: a JSON number, or (protojson also accepts it) a numeric string. */
    private static int toInt(Object v, String field) throws Json.ParseException {
        if (v == null) {
            return 0;
        }
        try {
            BigDecimal d = v instanceof String ? new BigDecimal((String) v) : (BigDecimal) v;
            return d.intValueExact();
        } catch (ClassCastException | ArithmeticException | NumberFormatException e) {
            throw new Json.ParseException(field + " is not an int32: " + v);
        }
    }
}
