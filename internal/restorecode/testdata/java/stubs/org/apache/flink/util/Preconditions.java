// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.util;

public final class Preconditions {
    private Preconditions() {}

    public static void checkState(boolean condition, Object errorMessage) {
        if (!condition) {
            throw new IllegalStateException(String.valueOf(errorMessage));
        }
    }
}
