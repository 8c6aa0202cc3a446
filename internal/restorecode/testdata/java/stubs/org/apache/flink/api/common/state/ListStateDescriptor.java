// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.api.common.state;

public class ListStateDescriptor<T> extends StateDescriptor<ListState<T>, java.util.List<T>> {
    public ListStateDescriptor(String name, Class<T> elementTypeClass) {
        super(name);
    }
}
