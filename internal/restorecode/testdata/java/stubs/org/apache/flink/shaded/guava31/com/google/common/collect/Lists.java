// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.shaded.guava31.com.google.common.collect;

import java.util.ArrayList;

/** Stub of Flink's shaded Guava Lists: the signatures are Guava's, the bodies are ours. */
public final class Lists {
    private Lists() {}

    public static <E> ArrayList<E> newArrayList(Iterable<? extends E> elements) {
        ArrayList<E> list = new ArrayList<>();
        for (E e : elements) {
            list.add(e);
        }
        return list;
    }
}
