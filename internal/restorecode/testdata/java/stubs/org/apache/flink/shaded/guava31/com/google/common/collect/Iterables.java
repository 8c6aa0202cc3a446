// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.shaded.guava31.com.google.common.collect;

import java.util.Collection;
import java.util.Iterator;
import java.util.NoSuchElementException;

/** Stub of Flink's shaded Guava Iterables: the signatures are Guava's, the bodies are ours. */
public final class Iterables {
    private Iterables() {}

    public static <T> T getOnlyElement(Iterable<T> iterable) {
        Iterator<T> it = iterable.iterator();
        T first = it.next();
        if (it.hasNext()) {
            throw new IllegalArgumentException("more than one element");
        }
        return first;
    }

    public static <T> T getOnlyElement(Iterable<? extends T> iterable, T defaultValue) {
        Iterator<? extends T> it = iterable.iterator();
        if (!it.hasNext()) {
            return defaultValue;
        }
        T first = it.next();
        if (it.hasNext()) {
            throw new IllegalArgumentException("more than one element");
        }
        return first;
    }

    public static <T> T getFirst(Iterable<? extends T> iterable, T defaultValue) {
        Iterator<? extends T> it = iterable.iterator();
        return it.hasNext() ? it.next() : defaultValue;
    }

    public static <T> boolean addAll(Collection<T> addTo, Iterable<? extends T> elementsToAdd) {
        boolean changed = false;
        for (T t : elementsToAdd) {
            changed |= addTo.add(t);
        }
        return changed;
    }

    public static <T> T get(Iterable<T> iterable, int position) {
        Iterator<T> it = iterable.iterator();
        for (int i = 0; i < position; i++) {
            it.next();
        }
        if (!it.hasNext()) {
            throw new NoSuchElementException();
        }
        return it.next();
    }
}
