package com.github.flinkpreflight.validator;

import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * The validator's options, read once from the operator's configuration (its {@code config.yaml} /
 * {@code flink-conf.yaml}, which the operator hands to every validator plugin through
 * {@code Plugin.configure}) under {@link #PREFIX}. Parsing is strict: a bad value is an error
 * that names the key, and the validator then follows {@code on-failure} on every call.
 */
final class ValidatorConfig {

    static final String PREFIX = "preflight.validator.";
    static final String URL = "url";
    static final String ON_FAILURE = "on-failure";
    static final String CONNECT_TIMEOUT = "connect-timeout";
    static final String REQUEST_TIMEOUT = "request-timeout";
    static final String DRY_RUN = "dry-run";

    static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** Below the API server's 10 s wait for the operator's webhook, above preflightd's 5 s. */
    static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(8);

    /** A missing or malformed option. */
    static final class ConfigException extends Exception {
        private static final long serialVersionUID = 1L;

        ConfigException(String message) {
            super(message);
        }
    }

    final URI serviceUrl;
    /** Deny (true) or allow (false) a change that could not be checked. */
    final boolean failClosed;
    final Duration connectTimeout;
    final Duration requestTimeout;
    final boolean dryRun;

    private ValidatorConfig(
            URI serviceUrl,
            boolean failClosed,
            Duration connectTimeout,
            Duration requestTimeout,
            boolean dryRun) {
        this.serviceUrl = serviceUrl;
        this.failClosed = failClosed;
        this.connectTimeout = connectTimeout;
        this.requestTimeout = requestTimeout;
        this.dryRun = dryRun;
    }

    /**
     * The failure policy alone, read leniently, so that even a configuration that fails to parse
     * is handled the way the user asked; anything unreadable means fail-closed.
     */
    static boolean failClosedOf(Map<String, String> conf) {
        try {
            return parsePolicy(conf.get(PREFIX + ON_FAILURE));
        } catch (ConfigException e) {
            return true;
        }
    }

    static ValidatorConfig parse(Map<String, String> conf) throws ConfigException {
        String url = trimmed(conf.get(PREFIX + URL));
        if (url.isEmpty()) {
            throw new ConfigException(
                    "'" + PREFIX + URL + "' is not set: give the preflightd HTTP address, e.g. "
                            + PREFIX + URL + ": http://preflightd.preflight:8080");
        }
        return new ValidatorConfig(
                httpUri(PREFIX + URL, url),
                parsePolicy(conf.get(PREFIX + ON_FAILURE)),
                positiveDuration(CONNECT_TIMEOUT, conf, DEFAULT_CONNECT_TIMEOUT),
                positiveDuration(REQUEST_TIMEOUT, conf, DEFAULT_REQUEST_TIMEOUT),
                parseBoolean(PREFIX + DRY_RUN, conf.get(PREFIX + DRY_RUN)));
    }

    private static String trimmed(String s) {
        return s == null ? "" : s.trim();
    }

    /** fail-open (the default, as preflightd's --admission-failure-policy) or fail-closed. */
    static boolean parsePolicy(String v) throws ConfigException {
        switch (trimmed(v).toLowerCase(Locale.ROOT).replace('_', '-')) {
            case "":
            case "fail-open":
            case "open":
                return false;
            case "fail-closed":
            case "closed":
                return true;
            default:
                throw new ConfigException(
                        "'" + PREFIX + ON_FAILURE + "' is '" + v + "': use fail-open or fail-closed");
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

    /** An absolute http(s) URI with a host. */
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

    private static Duration positiveDuration(String key, Map<String, String> conf, Duration dflt)
            throws ConfigException {
        String v = conf.get(PREFIX + key);
        if (trimmed(v).isEmpty()) {
            return dflt;
        }
        Duration d = parseDuration(PREFIX + key, v);
        if (d.isZero() || d.isNegative()) {
            throw new ConfigException("'" + PREFIX + key + "' must be positive: " + v);
        }
        return d;
    }

    /**
     * Flink's duration syntax (TimeUtils.parseDuration), the units a timeout needs: a number and
     * an optional unit (ms, s, min, h and their long forms), blanks allowed between; no unit
     * means milliseconds.
     */
    static Duration parseDuration(String key, String v) throws ConfigException {
        String s = trimmed(v).toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        if (i == 0 || i > 12) {
            throw new ConfigException("'" + key + "' is not a duration: '" + v + "' (e.g. 8 s)");
        }
        long n = Long.parseLong(s.substring(0, i));
        switch (s.substring(i).trim()) {
            case "":
            case "ms":
            case "milli":
            case "millis":
            case "millisecond":
            case "milliseconds":
                return Duration.ofMillis(n);
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
            default:
                throw new ConfigException("'" + key + "' has an unknown time unit: " + v);
        }
    }
}
