package ops;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;

/** State names from a constructor constant, a concatenation, and a parameter (not constant). */
public class Names extends Base {
    private final String ctorName;
    private final String fromParam;
    private ListState<String> s1, s2, s3;

    public Names(String param) {
        this.ctorName = "ctor-state";
        this.fromParam = param;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        String prefix = "concat";
        int index = 3;
        s1 = context.getOperatorStateStore().getListState(new ListStateDescriptor<>(ctorName, String.class));
        s2 = context.getOperatorStateStore().getListState(new ListStateDescriptor<>(prefix + "-" + index, String.class));
        s3 = context.getOperatorStateStore().getListState(new ListStateDescriptor<>(fromParam, String.class));
    }
}
