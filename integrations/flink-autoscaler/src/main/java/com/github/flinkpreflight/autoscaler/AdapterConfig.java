package com.github.flinkpreflight.autoscaler;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * The adapter's options, read per call from the plugin context's configuration, where the operator
 * puts {@code job.autoscaler.scaling.custom-executor.<name>.<key>} with the prefix stripped (so a
 * job can override them). Parsing is strict: a bad value is an error that names the key, and the
 * adapter then follows {@code on-failure}.
 */
final class AdapterConfig {

    static final String URL = "url";
    static final String ON_FAILURE = "on-failure";
    static final String CONNECT_TIMEOUT = "connect-timeout";
    static final String REQUEST_TIMEOUT = "request-timeout";
    static final String FLINK_REST_URL = "flink-rest-url";
    static final String FLINK_VERSION = "flink-version";
    static final String ALIGN_TO_KEY_GROUPS = "align-to-key-groups";
    static final String DRY_RUN = "dry-run";

    /** Where the operator records the FlinkDeployment's spec.flinkVersion, e.g. {@code v1_19}. */
    static final String OPERATOR_FLINK_VERSION = "$internal.flink.version";
    /** The RPC frame size of the job (Flink 1.18+ name, then the older one). */
    static final String[] FRAME_SIZE_KEYS = {"pekko.framesize", "akka.framesize"};

    static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);

    /** What to do when no decision can be had: the service's FailurePolicy. */
    enum FailurePolicy {
        FAIL_CLOSED("FAILURE_POLICY_FAIL_CLOSED"),
        FAIL_OPEN("FAILURE_POLICY_FAIL_OPEN");

        final String protoName;

        FailurePolicy(String protoName) {
            this.protoName = protoName;
        }
    }

    /** A missing or malformed option. */
    static final class ConfigException extends Exception {
        private static final long serialVersionUID = 1L;

        ConfigException(String message) {
            super(message);
        }
    }

    final URI serviceUrl;
    final FailurePolicy onFailure;
    final Duration connectTimeout;
    final Duration requestTimeout;
    /** Null: ask the context's REST client. */
    final URI flinkRestUrl;
    /** Empty: unknown to the adapter (the service then assumes version-dependent bugs apply). */
    final String flinkVersion;
    /** 0: not configured. */
    final long rpcFrameSizeBytes;

    final boolean alignToKeyGroups;
    final boolean dryRun;

    private AdapterConfig(
            URI serviceUrl,
            FailurePolicy onFailure,
            Duration connectTimeout,
            Duration requestTimeout,
            URI flinkRestUrl,
            String flinkVersion,
            long rpcFrameSizeBytes,
            boolean alignToKeyGroups,
            boolean dryRun) {
        this.serviceUrl = serviceUrl;
        this.onFailure = onFailure;
        this.connectTimeout = connectTimeout;
        this.requestTimeout = requestTimeout;
        this.flinkRestUrl = flinkRestUrl;
        this.flinkVersion = flinkVersion;
        this.rpcFrameSizeBytes = rpcFrameSizeBytes;
        this.alignToKeyGroups = alignToKeyGroups;
        this.dryRun = dryRun;
    }

    /**
     * The failure policy alone, read leniently, so that even a configuration that fails to parse
     * is handled the way the user asked; anything unreadable means fail-closed.
     */
    static FailurePolicy failurePolicyOf(Map<String, String> conf) {
        try {
            return parsePolicy(conf.get(ON_FAILURE));
        } catch (ConfigException e) {
            return FailurePolicy.FAIL_CLOSED;
        }
    }

    /** The dry-run flag alone, read leniently: only a clear "true" is a dry run. */
    static boolean dryRunOf(Map<String, String> conf) {
        return "true".equalsIgnoreCase(trimmed(conf.get(DRY_RUN)));
    }

    static AdapterConfig parse(Map<String, String> conf) throws ConfigException {
        String url = trimmed(conf.get(URL));
        if (url.isEmpty()) {
            throw new ConfigException(
                    "'"
                            + URL
                            + "' is not set: give the preflightd HTTP address, e.g."
                            + " job.autoscaler.scaling.custom-executor.<name>.url:"
                            + " http://preflightd:8080");
        }
        String rest = trimmed(conf.get(FLINK_REST_URL));
        String version = trimmed(conf.get(FLINK_VERSION));
        if (version.isEmpty()) {
            version = operatorFlinkVersion(trimmed(conf.get(OPERATOR_FLINK_VERSION)));
        }
        long frame = 0;
        for (String key : FRAME_SIZE_KEYS) {
            String v = trimmed(conf.get(key));
            if (!v.isEmpty()) {
                frame = parseMemorySize(key, v);
                break;
            }
        }
        return new AdapterConfig(
                httpUri(URL, url),
                parsePolicy(conf.get(ON_FAILURE)),
                positiveDuration(CONNECT_TIMEOUT, conf.get(CONNECT_TIMEOUT), DEFAULT_CONNECT_TIMEOUT),
                positiveDuration(REQUEST_TIMEOUT, conf.get(REQUEST_TIMEOUT), DEFAULT_REQUEST_TIMEOUT),
                rest.isEmpty() ? null : httpUri(FLINK_REST_URL, rest),
                version,
                frame,
                parseBoolean(ALIGN_TO_KEY_GROUPS, conf.get(ALIGN_TO_KEY_GROUPS)),
                parseBoolean(DRY_RUN, conf.get(DRY_RUN)));
    }

    private static String trimmed(String s) {
        return s == null ? "" : s.trim();
    }

    static FailurePolicy parsePolicy(String v) throws ConfigException {
        String s = trimmed(v).toLowerCase(Locale.ROOT).replace('_', '-');
        switch (s) {
            case "":
            case "fail-closed":
            case "closed":
                return FailurePolicy.FAIL_CLOSED;
            case "fail-open":
            case "open":
                return FailurePolicy.FAIL_OPEN;
            default:
                throw new ConfigException(
                        "'" + ON_FAILURE + "' is '" + v + "': use fail-closed or fail-open");
        }
    }

    static boolean parseBoolean(String key, String v) throws ConfigException {
        String s = trimmed(v).toLowerCase(Locale.ROOT);
        if (s.isEmpty() || s.equals("false")) {
            return false;
        }
        if (s.equals("true")) {
            return true;
        }
        throw new ConfigException("'" + key + "' is '" + v + "': use true or false");
    }

    /** An absolute http(s) URI with a host, as the service and Flink's REST API need. */
    static URI httpUri(String key, String v) throws ConfigException {
        URI u;
        try {
            u = new URI(v);
        } catch (java.net.URISyntaxException e) {
            throw new ConfigException("'" + key + "' is not a URL: " + v);
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || u.getHost() == null) {
            throw new ConfigException("'" + key + "' is not an http(s) URL with a host: " + v);
        }
        return u;
    }

    /**
     * Flink's duration syntax (TimeUtils.parseDuration): a number and an optional unit, blanks
     * allowed between; no unit means milliseconds.
     */
    static Duration parseDuration(String key, String v) throws ConfigException {
        String s = trimmed(v).toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        if (i == 0) {
            throw new ConfigException("'" + key + "' is not a duration: '" + v + "' (e.g. 30 s)");
        }
        long n;
        try {
            n = Long.parseLong(s.substring(0, i));
        } catch (NumberFormatException e) {
            throw new ConfigException("'" + key + "' is too large: " + v);
        }
        String unit = s.substring(i).trim();
        try {
            switch (unit) {
                case "":
                case "ms":
                case "milli":
                case "millis":
                case "millisecond":
                case "milliseconds":
                    return Duration.ofMillis(n);
                case "ns":
                case "nano":
                case "nanos":
                case "nanosecond":
                case "nanoseconds":
                    return Duration.ofNanos(n);
                case "us":
                case "µs":
                case "micro":
                case "micros":
                case "microsecond":
                case "microseconds":
                    return Duration.ofNanos(Math.multiplyExact(n, 1000L));
                case "s":
                case "sec":
                case "secs":
                case "second":
                case "seconds":
                    return Duration.ofSeconds(n);
                case "m":
                case "min":
                case "mins":
                case "minute":
                case "minutes":
                    return Duration.ofMinutes(n);
                case "h":
                case "hour":
                case "hours":
                    return Duration.ofHours(n);
                case "d":
                case "day":
                case "days":
                    return Duration.ofDays(n);
                default:
                    throw new ConfigException(
                            "'" + key + "' has an unknown time unit '" + unit + "': " + v);
            }
        } catch (ArithmeticException e) {
            throw new ConfigException("'" + key + "' is too large: " + v);
        }
    }

    private static Duration positiveDuration(String key, String v, Duration dflt)
            throws ConfigException {
        if (trimmed(v).isEmpty()) {
            return dflt;
        }
        Duration d = parseDuration(key, v);
        if (d.isZero() || d.isNegative()) {
            throw new ConfigException("'" + key + "' must be positive: " + v);
        }
        return d;
    }

    /**
     * Flink's memory size syntax (MemorySize.parseBytes): a number and an optional unit, all units
     * binary: b, k/kb/kibibytes, m/mb/mebibytes, g/gb/gibibytes, t/tb/tebibytes.
     */
    static long parseMemorySize(String key, String v) throws ConfigException {
        String s = trimmed(v).toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        if (i == 0) {
            throw new ConfigException("'" + key + "' is not a memory size: " + v);
        }
        String unit = s.substring(i).trim();
        int shift;
        switch (unit) {
            case "":
            case "b":
            case "bytes":
                shift = 0;
                break;
            case "k":
            case "kb":
            case "kibibytes":
                shift = 10;
                break;
            case "m":
            case "mb":
            case "mebibytes":
                shift = 20;
                break;
            case "g":
            case "gb":
            case "gibibytes":
                shift = 30;
                break;
            case "t":
            case "tb":
            case "tebibytes":
                shift = 40;
                break;
            default:
                throw new ConfigException("'" + key + "' has an unknown size unit: " + v);
        }
        try {
            BigDecimal n = new BigDecimal(s.substring(0, i));
            return n.multiply(BigDecimal.valueOf(1L << shift)).longValueExact();
        } catch (ArithmeticException e) {
            throw new ConfigException("'" + key + "' is too large: " + v);
        }
    }

    /** {@code v1_19} (the operator's FlinkVersion enum name) to {@code 1.19}; else empty. */
    static String operatorFlinkVersion(String v) {
        if (v.matches("v\\d+_\\d+")) {
            return v.substring(1).replace('_', '.');
        }
        return "";
    }
}
