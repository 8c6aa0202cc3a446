package ops;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.util.Preconditions;

/** Count checks and what they depend on, the shapes of flink-connector-kafka's
 * TransactionOwnership.EXPLICIT_BY_WRITER_STATE: a size check where the elements are known not to
 * be empty, a size check only when not scaling down, a check of the subtask index against a value
 * read from an element, and the size of a set of values read from the elements. */
public class AssignmentChecks extends Base {
    private TaskInfo task;
    private int total;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        total += nonEmptyExact(copy(context, "non-empty-exact"));
        total += whenNotScalingDown(copy(context, "when-not-scaling-down"), task.getNumberOfParallelSubtasks());
        total += subtaskBelow(copy(context, "subtask-below-element"));
        total += distinctValues(copy(context, "distinct-values"));
        total += afterParallelismTest(copy(context, "after-parallelism-test"));
        total += onSubtaskZero(copy(context, "subtask-zero"));
    }

    /** Empty returns first: the size check can only fail on several elements (AT-MOST-ONE). */
    private static int nonEmptyExact(List<String> s) {
        if (s.isEmpty()) {
            return 0;
        }
        Preconditions.checkArgument(s.size() == 1, "one"); // decisive non-empty-exact
        return 1;
    }

    /** The size check runs only when the parallelism is at least a value read from the elements
     * (the parallelism they were written at): an assumption about how they are assigned across a
     * rescale (ORDER-DEPENDENT). */
    private static int whenNotScalingDown(List<String> s, int parallelism) {
        if (s.isEmpty()) {
            return 0;
        }
        int owned = s.iterator().next().length();
        if (parallelism >= owned) {
            Preconditions.checkArgument(s.size() == 1, "uniform"); // decisive when-not-scaling-down
        }
        int n = 0;
        for (String x : s) {
            n += x.length();
        }
        return n;
    }

    /** Near miss: a test of the subtask index against a constant says nothing about the
     * elements; the size check under it stays EXACTLY-ONE. */
    private int onSubtaskZero(List<String> s) {
        if (task.getIndexOfThisSubtask() == 0) {
            Preconditions.checkArgument(s.size() == 1, "one"); // decisive subtask-zero
        }
        return 0;
    }

    /** The subtask index checked against an element's value: which subtask gets which element. */
    private int subtaskBelow(List<String> s) {
        if (s.isEmpty()) {
            return 0;
        }
        int max = s.iterator().next().length();
        Preconditions.checkArgument(task.getIndexOfThisSubtask() < max, "consecutive"); // decisive subtask-below-element
        int n = 0;
        for (String x : s) {
            n += x.length();
        }
        return n;
    }

    /** Near miss: the size of a set of values read from the elements is not their count. */
    private static int distinctValues(List<String> s) {
        Set<Integer> lengths = s.stream().map(String::length).collect(Collectors.toSet());
        Preconditions.checkArgument(lengths.size() == 1, "all the same length");
        int n = 0;
        for (String x : s) { // decisive distinct-values
            n += x.length();
        }
        return n;
    }

    /** Near miss: the parallelism test's branches have met again before the size check. */
    private int afterParallelismTest(List<String> s) {
        if (task.getNumberOfParallelSubtasks() > 1) {
            total++;
        }
        Preconditions.checkArgument(s.size() == 1, "one"); // decisive after-parallelism-test
        return s.get(0).length();
    }

    private static List<String> copy(FunctionInitializationContext context, String name) throws Exception {
        ListState<String> state = context.getOperatorStateStore().getListState(new ListStateDescriptor<>(name, String.class));
        List<String> out = new ArrayList<>();
        for (String x : state.get()) {
            out.add(x);
        }
        return out;
    }
}
