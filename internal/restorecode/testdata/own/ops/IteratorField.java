package ops;

import java.util.Iterator;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** Near-miss: the iterator is kept in a field and used elsewhere. */
public class IteratorField extends Base {
    private Iterator<String> pending;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<String> state = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("iterator-field", String.class));
        pending = state.get().iterator(); // decisive iterator-field
    }

    public String nextPending() {
        return pending.next();
    }
}
