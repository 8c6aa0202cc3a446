package ops;

import java.util.Iterator;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** Near-miss: next() behind hasNext(): the rest is ignored. */
public class GuardedNext extends Base {
    private ListState<String> state;
    private String value;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        state = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("guarded", String.class));
        Iterator<String> it = state.get().iterator();
        if (it.hasNext()) {
            value = it.next(); // decisive guarded
        }
    }
}
