package org.apache.flink.api.common.state;

/** Test stand-in for Flink's ListState. */
public interface ListState<T> {
    Iterable<T> get() throws Exception;

    void update(java.util.List<T> values) throws Exception;

    void add(T value) throws Exception;

    void clear();
}
