package com.github.flinkpreflight.common;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;

/**
 * Option values as Flink writes them (its duration and memory size syntax, booleans, URLs), read
 * strictly: a bad value is a {@link ConfigException} that names the key.
 */
final class Options {

    private Options() {}

    /** The value without surrounding blanks; empty for null. */
    static String trimmed(String s) {
        return s == null ? "" : s.trim();
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

    /**
     * A failure policy, true for fail-closed: fail-open or fail-closed (also open or closed, any
     * case, '_' for '-'), empty for byDefault. The error names the default first.
     */
    static boolean failClosed(String key, String v, boolean byDefault) throws ConfigException {
        switch (trimmed(v).toLowerCase(Locale.ROOT).replace('_', '-')) {
            case "":
                return byDefault;
            case "fail-closed":
            case "closed":
                return true;
            case "fail-open":
            case "open":
                return false;
            default:
                throw new ConfigException("'" + key + "' is '" + v + "': use "
                        + (byDefault ? "fail-closed or fail-open" : "fail-open or fail-closed"));
        }
    }

    /**
     * The failure policy alone, read leniently, so that even a configuration that fails to parse
     * is handled the way the user asked; anything unreadable means fail-closed.
     */
    static boolean failClosedLeniently(String key, String v, boolean byDefault) {
        try {
            return failClosed(key, v, byDefault);
        } catch (ConfigException e) {
            return true;
        }
    }

    /** An absolute http(s) URI with a host, as preflightd and Flink's REST API need. */
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
        int i = digits(s);
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

    /** How many digits (Character.isDigit) {@code s} starts with. */
    private static int digits(String s) {
        int i = 0;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        return i;
    }

    /** A positive duration, or {@code dflt} when the value is blank. */
    static Duration positiveDuration(String key, String v, Duration dflt)
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
        int i = digits(s);
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
}
