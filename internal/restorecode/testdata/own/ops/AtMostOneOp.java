package ops;

import java.util.Iterator;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** next() behind hasNext(), then a check that no second element exists. */
public class AtMostOneOp extends Base {
    private String value;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<String> state = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("at-most-one", String.class));
        if (context.isRestored()) {
            Iterator<String> it = state.get().iterator();
            if (it.hasNext()) {
                value = it.next();
                if (it.hasNext()) { // decisive at-most-one
                    throw new IllegalStateException("more than one element");
                }
            }
        }
    }
}
