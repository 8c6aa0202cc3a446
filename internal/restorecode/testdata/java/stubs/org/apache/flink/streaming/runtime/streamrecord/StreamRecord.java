// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.streaming.runtime.streamrecord;

public final class StreamRecord<T> {
    private T value;

    public StreamRecord(T value) {
        this.value = value;
    }

    public T getValue() {
        return value;
    }
}
