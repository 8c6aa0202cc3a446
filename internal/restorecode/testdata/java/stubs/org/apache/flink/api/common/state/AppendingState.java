// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.api.common.state;

public interface AppendingState<IN, OUT> extends State {
    OUT get() throws Exception;

    void add(IN value) throws Exception;
}
