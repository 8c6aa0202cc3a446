package ops;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** The restored elements are handed to code outside the given classes. */
public class Escapes extends Base {
    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<String> s = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("escapes", String.class));
        System.out.println(s.get()); // decisive escapes
    }
}
