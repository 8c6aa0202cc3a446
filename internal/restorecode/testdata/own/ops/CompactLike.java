package ops;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;

/** The shape of CompactOperator.initializeState: the first element, unguarded, under isRestored. */
public class CompactLike extends AbstractStreamOperator<Long> {
    private transient ListState<Long> expiredFilesState;
    private transient Long expiredFiles;

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        expiredFilesState =
                context.getOperatorStateStore()
                        .getListState(new ListStateDescriptor<>("expired-files", Long.class));
        if (context.isRestored()) {
            expiredFiles = expiredFilesState.get().iterator().next(); // decisive expired-files
        }
    }
}
