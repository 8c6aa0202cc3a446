package org.apache.flink.runtime.state;

/** Test stand-in for Flink's FunctionSnapshotContext. */
public interface FunctionSnapshotContext {
    long getCheckpointId();
}
