// Stub (our code, not Guava's): the few members of a relocated Guava copy that the catalog's
// restore methods call, with Guava's signatures, so that ecj resolves them.

package org.apache.flink.shaded.guava31.com.google.common.collect;

import java.util.Collection;
import java.util.Iterator;

public final class Iterables {
    private Iterables() {}

    public static <T> boolean addAll(Collection<T> addTo, Iterable<? extends T> elementsToAdd) {
        boolean changed = false;
        for (T t : elementsToAdd) {
            changed |= addTo.add(t);
        }
        return changed;
    }

    public static <T> T getOnlyElement(Iterable<T> iterable) {
        Iterator<T> it = iterable.iterator();
        T first = it.next();
        if (it.hasNext()) {
            throw new IllegalArgumentException();
        }
        return first;
    }

    public static <T> T getFirst(Iterable<? extends T> iterable, T defaultValue) {
        Iterator<? extends T> it = iterable.iterator();
        return it.hasNext() ? it.next() : defaultValue;
    }

    public static int size(Iterable<?> iterable) {
        int n = 0;
        for (Object o : iterable) {
            n++;
        }
        return n;
    }

    public static boolean isEmpty(Iterable<?> iterable) {
        return !iterable.iterator().hasNext();
    }
}
