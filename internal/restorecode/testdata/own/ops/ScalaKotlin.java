package ops;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import scala.collection.JavaConverters$;

/** What scalac and kotlinc emit for head, headOption, single() and singleOrNull(). */
public class ScalaKotlin extends Base {
    private String a, b, c, d;

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        OperatorStateStore store = context.getOperatorStateStore();
        ListState<String> s1 = store.getListState(new ListStateDescriptor<>("scala-head", String.class));
        ListState<String> s2 = store.getListState(new ListStateDescriptor<>("scala-head-option", String.class));
        ListState<String> s3 = store.getListState(new ListStateDescriptor<>("kotlin-single", String.class));
        ListState<String> s4 = store.getListState(new ListStateDescriptor<>("kotlin-single-or-null", String.class));
        a = JavaConverters$.MODULE$.iterableAsScalaIterableConverter(s1.get()).asScala().head(); // decisive scala-head
        b = JavaConverters$.MODULE$.iterableAsScalaIterableConverter(s2.get()).asScala().headOption().getOrElse("x"); // decisive scala-head-option
        c = kotlin.collections.CollectionsKt.single(s3.get()); // decisive kotlin-single
        d = kotlin.collections.CollectionsKt.singleOrNull(s4.get()); // decisive kotlin-single-or-null
    }
}
