// Stub (our code, not Caffeine's): the members of Caffeine's Cache (Paimon's relocated copy) that
// the restore paths' helpers call, with Caffeine's signatures, so that ecj resolves them.

package org.apache.paimon.shade.caffeine2.com.github.benmanes.caffeine.cache;

public interface Cache<K, V> {
    V getIfPresent(Object key);

    void put(K key, V value);

    void invalidate(Object key);

    void invalidateAll();
}
