package ops;

import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** Near-miss: keyed state (RuntimeContext.getListState) is not operator state; nothing to report. */
public class KeyedOnly extends Base {
    private RuntimeContext rc;
    private String v;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        v = rc.getListState(new ListStateDescriptor<>("keyed", String.class)).get().iterator().next();
    }
}
