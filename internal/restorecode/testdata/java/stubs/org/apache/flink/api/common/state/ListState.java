// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.api.common.state;

import java.util.List;

public interface ListState<T> extends MergingState<T, Iterable<T>> {
    void update(List<T> values) throws Exception;

    void addAll(List<T> values) throws Exception;
}
