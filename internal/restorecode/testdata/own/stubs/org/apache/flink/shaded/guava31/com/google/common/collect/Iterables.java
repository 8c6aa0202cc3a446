package org.apache.flink.shaded.guava31.com.google.common.collect;

/** Test stand-in for Flink's shaded Guava Iterables. */
public final class Iterables {
    public static <T> T getOnlyElement(Iterable<T> it) {
        return it.iterator().next();
    }

    public static <T> T getOnlyElement(Iterable<? extends T> it, T dflt) {
        return dflt;
    }

    public static <T> T getLast(Iterable<T> it) {
        return null;
    }

    public static boolean isEmpty(Iterable<?> it) {
        return !it.iterator().hasNext();
    }
}
