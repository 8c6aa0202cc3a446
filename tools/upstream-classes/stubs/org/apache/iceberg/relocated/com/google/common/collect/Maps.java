// Stub (our code, not Guava's): the few members of a relocated Guava copy that the catalog's
// restore methods call, with Guava's signatures, so that ecj resolves them.

package org.apache.iceberg.relocated.com.google.common.collect;

import java.util.HashMap;
import java.util.SortedMap;
import java.util.TreeMap;

public final class Maps {
    private Maps() {}

    public static <K, V> HashMap<K, V> newHashMap() {
        return new HashMap<>();
    }

    public static <K extends Comparable, V> TreeMap<K, V> newTreeMap() {
        return new TreeMap<>();
    }

    public static <K, V> TreeMap<K, V> newTreeMap(SortedMap<K, ? extends V> map) {
        return new TreeMap<>(map);
    }
}
