package ops;

import java.util.Collections;
import java.util.List;
import org.apache.flink.streaming.api.checkpoint.ListCheckpointed;

/** A ListCheckpointed function that takes the first element of its restored list. */
public class Legacy implements ListCheckpointed<Long> {
    private long count;

    @Override
    public List<Long> snapshotState(long checkpointId, long timestamp) {
        return Collections.singletonList(count);
    }

    @Override
    public void restoreState(List<Long> state) {
        count = state.get(0); // decisive _default_
    }
}
