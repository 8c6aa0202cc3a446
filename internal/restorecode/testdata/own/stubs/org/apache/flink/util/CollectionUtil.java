package org.apache.flink.util;

import java.util.ArrayList;
import java.util.List;

/** Test stand-in for Flink's CollectionUtil. */
public final class CollectionUtil {
    public static <T> List<T> iterableToList(Iterable<T> it) {
        List<T> out = new ArrayList<>();
        it.forEach(out::add);
        return out;
    }
}
