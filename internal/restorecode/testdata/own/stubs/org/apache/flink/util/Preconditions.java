package org.apache.flink.util;

/** Test stand-in for Flink's Preconditions. */
public final class Preconditions {
    public static void checkArgument(boolean condition, Object message) {
        if (!condition) {
            throw new IllegalArgumentException(String.valueOf(message));
        }
    }

    public static void checkState(boolean condition, Object message) {
        if (!condition) {
            throw new IllegalStateException(String.valueOf(message));
        }
    }
}
