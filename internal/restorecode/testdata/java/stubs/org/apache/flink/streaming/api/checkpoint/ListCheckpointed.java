// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.streaming.api.checkpoint;

import java.io.Serializable;
import java.util.List;

public interface ListCheckpointed<T extends Serializable> {
    List<T> snapshotState(long checkpointId, long timestamp) throws Exception;

    void restoreState(List<T> state) throws Exception;
}
