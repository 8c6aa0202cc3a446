// Stub (our code, not Guava's): the few members of a relocated Guava copy that the catalog's
// restore methods call, with Guava's signatures, so that ecj resolves them.

package org.apache.iceberg.relocated.com.google.common.base;

public final class Strings {
    private Strings() {}

    public static boolean isNullOrEmpty(String string) {
        return string == null || string.isEmpty();
    }
}
