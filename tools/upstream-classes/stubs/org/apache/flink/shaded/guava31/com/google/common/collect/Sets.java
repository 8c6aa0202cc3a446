// Stub (our code, not Guava's): the few members of a relocated Guava copy that the catalog's
// restore methods call, with Guava's signatures, so that ecj resolves them.

package org.apache.flink.shaded.guava31.com.google.common.collect;

import java.util.HashSet;

public final class Sets {
    private Sets() {}

    public static <E> HashSet<E> newHashSet() {
        return new HashSet<>();
    }

    public static <E> HashSet<E> newHashSet(Iterable<? extends E> elements) {
        HashSet<E> set = new HashSet<>();
        for (E e : elements) {
            set.add(e);
        }
        return set;
    }
}
