package ops;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;

/** The shape of CompactOperator.initializeState: the first element, unguarded, under isRestored. */
public class CompactLike extends AbstractStreamOperator<Long> {
    private transient ListState<Map<Long, List<String>>> expiredFilesState;
    private transient TreeMap<Long, List<String>> expiredFiles;

    @Override
    @SuppressWarnings("unchecked")
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        ListStateDescriptor<Map<Long, List<String>>> metaDescriptor =
                new ListStateDescriptor<>("expired-files", (Class<Map<Long, List<String>>>) (Class<?>) Map.class);
        this.expiredFilesState = context.getOperatorStateStore().getListState(metaDescriptor);
        this.expiredFiles = new TreeMap<>();
        if (context.isRestored()) {
            this.expiredFiles.putAll(this.expiredFilesState.get().iterator().next()); // decisive expired-files
        }
    }
}
