package ops;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.util.Preconditions;

/** Loops over the restored elements that remember what an earlier iteration saw, the shapes of
 * Iceberg's EqualityConvertPlanner (checkState(field == null) before setting it), flink-cdc's
 * DebeziumSourceFunction (set when null, else throw). */
public class SeenBefore extends Base {
    private Long snapshotId;
    private String offset;
    private long total;
    private boolean any;
    private final List<String> kept = new ArrayList<>();

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<Long> ids = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("check-before-set", Long.class));
        snapshotId = null;
        for (Long id : ids.get()) {
            Preconditions.checkState(snapshotId == null, "at most one"); // decisive check-before-set
            snapshotId = id;
        }
        ListState<byte[]> offsets = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("set-else-throw", byte[].class));
        for (byte[] b : offsets.get()) {
            if (offset == null) { // decisive set-else-throw
                offset = new String(b);
            } else {
                throw new IllegalStateException("restored from several tasks");
            }
        }
        ListState<String> locals = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("local-seen", String.class));
        String seen = null;
        for (String s : locals.get()) {
            if (seen != null) { // decisive local-seen
                throw new IllegalStateException("several");
            }
            seen = s;
        }
        kept.add(seen);
        nearMisses(context);
    }

    /** Near misses: a null test of the element itself, a field that accumulates (read in the loop),
     * and a constant flag beside a copy are all MERGE-ALL. */
    private void nearMisses(FunctionInitializationContext context) throws Exception {
        ListState<String> names = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("null-element", String.class));
        for (String s : names.get()) { // decisive null-element
            if (s == null) {
                throw new IllegalStateException("null element");
            }
            kept.add(s);
        }
        ListState<Long> sums = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("accumulate", Long.class));
        for (long v : sums.get()) { // decisive accumulate
            total = total + v;
        }
        ListState<String> flags = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("flag-and-copy", String.class));
        for (String s : flags.get()) { // decisive flag-and-copy
            any = true;
            kept.add(s);
        }
    }
}
