package ops;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** next() without hasNext() and without isRestored(): restoredOnly is false. */
public class Unrestored extends Base {
    private String v;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<String> s = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("unrestored", String.class));
        v = s.get().iterator().next(); // decisive unrestored
    }
}
