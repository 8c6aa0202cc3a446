package ops;

import java.util.List;
import java.util.stream.StreamSupport;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.shaded.guava31.com.google.common.collect.Iterables;
import org.apache.flink.util.CollectionUtil;

/** Library calls and private helpers on the restore path. */
public class Helpers extends Base {
    private static final String ONLY = "only-element";
    private String a, b, c, d, e, f;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        OperatorStateStore store = context.getOperatorStateStore();
        ListState<String> only = store.getListState(new ListStateDescriptor<>(ONLY, String.class));
        ListState<String> copy = store.getListState(new ListStateDescriptor<>("copy-get0", String.class));
        ListState<String> stream = store.getListState(new ListStateDescriptor<>("stream-first", String.class));
        ListState<String> helper = store.getListState(new ListStateDescriptor<>("via-helper", String.class));
        ListState<String> kt = store.getListState(new ListStateDescriptor<>("kotlin-first", String.class));
        ListState<String> sized = store.getListState(new ListStateDescriptor<>("size-checked", String.class));
        if (!context.isRestored()) {
            return;
        }
        a = Iterables.getOnlyElement(only.get()); // decisive only-element
        b = CollectionUtil.iterableToList(copy.get()).get(0); // decisive copy-get0
        c = StreamSupport.stream(stream.get().spliterator(), false).findFirst().get(); // decisive stream-first
        d = firstOf(helper);
        e = kotlin.collections.CollectionsKt.first(kt.get()); // decisive kotlin-first
        List<String> l = CollectionUtil.iterableToList(sized.get());
        if (l.size() != 1) { // decisive size-checked
            throw new IllegalStateException("expected one");
        }
        f = l.get(0);
    }

    private static String firstOf(ListState<String> s) throws Exception {
        return s.get().iterator().next(); // decisive via-helper
    }
}
