package ops;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** An abstract base class that declares the restore method; subclasses inherit the state. */
public abstract class BaseOp extends Base {
    protected ListState<String> baseState;
    protected ListState<String> hookState;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        baseState = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("base-state", String.class));
        hookState = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("hook-state", String.class));
        if (context.isRestored()) {
            String first = baseState.get().iterator().next(); // decisive base-state
            restoreHook(hookState.get()); // decisive hook-state
        }
    }

    /** Implemented by subclasses: what they do with the elements is not known here. */
    protected abstract void restoreHook(Iterable<String> elements) throws Exception;
}
