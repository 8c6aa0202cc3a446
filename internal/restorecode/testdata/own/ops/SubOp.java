package ops;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** Overrides initializeState, calls super, registers its own state. */
public class SubOp extends BaseOp {
    private ListState<String> subState;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        super.initializeState(context);
        subState = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("sub-state", String.class));
    }

    @Override
    protected void restoreHook(Iterable<String> elements) {
        for (String e : elements) { // decisive hook-state-sub
            System.out.println(e);
        }
    }
}
