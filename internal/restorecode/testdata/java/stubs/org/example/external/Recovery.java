// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.example.external;

/** Not Flink: a library outside the analysed jar that receives the restored Iterable. */
public final class Recovery {
    private Recovery() {}

    public static void recoverAll(Iterable<?> restored) {}
}
