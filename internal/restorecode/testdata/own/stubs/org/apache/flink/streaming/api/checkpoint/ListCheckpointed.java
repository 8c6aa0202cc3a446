package org.apache.flink.streaming.api.checkpoint;

import java.util.List;

/** Test stand-in for Flink's ListCheckpointed. */
public interface ListCheckpointed<T extends java.io.Serializable> {
    List<T> snapshotState(long checkpointId, long timestamp) throws Exception;

    void restoreState(List<T> state) throws Exception;
}
