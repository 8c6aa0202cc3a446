package ops;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** Near-miss: a for-each that breaks after the first element. */
public class LoopBreak extends Base {
    private Long offset;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<Long> state = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("loop-break", Long.class));
        for (Long o : state.get()) { // decisive loop-break
            offset = o;
            break;
        }
    }
}
