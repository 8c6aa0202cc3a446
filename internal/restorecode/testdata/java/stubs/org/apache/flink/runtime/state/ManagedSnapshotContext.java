// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.runtime.state;

public interface ManagedSnapshotContext {
    long getCheckpointId();

    long getCheckpointTimestamp();
}
