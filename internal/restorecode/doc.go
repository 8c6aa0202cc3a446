// Package restorecode reads a job's class files and reports, for every class whose restore code
// registers operator state, each state's name, distribution mode and what the restore code
// assumes about the restored elements. It owns the analysis only: it reads jars, directories and
// class files, but it does not print, decide verdicts or consult the catalog.
//
// # What is a restore path
//
// Roots are initializeState(…Context) (CheckpointedFunction, AbstractStreamOperator) and a
// ListCheckpointed function's restoreState(List) (state "_default_"), a sink-v2 Sink's
// restoreWriter(…InitContext, Collection) (state "writer_raw_states", which SinkWriterOperator
// registers and hands whole to it, reported under the Sink class: SinkWriterOperator copies every
// restored element into a new list first, so the collection is a copy), plus any other method of
// the class that registers state (a trigger's constructor called from initializeState). A
// private method that no restore path calls (its call sites are all in code the interpretation
// never reaches, and no nest member or method handle reaches it) only registers: its states are
// NOT-READ. A state is registered by OperatorStateStore.getListState / getUnionListState /
// getBroadcastState (and the deprecated getOperatorState / getSerializableListState); it belongs
// to the class that declares the root, and is repeated under a subclass that declares its own
// root calling super. Whether a restoreState(List) is a root is decided as Flink's
// tryRestoreFunction does (instanceof) over the class hierarchy within the inputs: its class is
// a ListCheckpointed through a superclass or superinterface (a type outside the inputs counts
// by its name only) and not a CheckpointedFunction, which Flink restores through initializeState
// instead; or its class is neither and a subclass that is one inherits the method (the state is
// then the declaring class's, as an inherited initializeState's is). The walks visit each type
// once (hostile class files may form cycles), at most 64 supertypes per class and 256 subclasses.
//
// # How
//
// A test of the count is decisive when its failing edge is a short block ending in athrow, or
// when javac materialises it as a boolean passed to Preconditions.checkArgument/checkState;
// otherwise it only guards the reads behind it. Where the elements are already known not to be
// empty, a check for exactly one can only fail on several (AT-MOST-ONE). A comparison of the
// subtask index or the parallelism (getIndexOfThisSubtask, getNumberOfParallelSubtasks) with a
// value read from an element (the parallelism it was written at, the subtask that owned it)
// assumes how the elements are assigned to subtasks across a rescale: when it is decisive, and for
// a count check that runs only on one of its edges, the label is ORDER-DEPENDENT (as
// flink-connector-kafka's TransactionOwnership: "state not consecutively assigned", and "not
// uniformly assigned" only when not scaling down). A test against a constant (subtask == 0) says
// nothing about the elements. The size of a set of the elements or of a stream's collect() is not
// their count. A local list that receives the elements one by one counts as a copy of them. A
// loop over the elements that tests a variable (a field or a local) for null before it sets it,
// and throws when it is already set (`checkState(id == null); id = e`), fails on a second
// element (AT-MOST-ONE); a loop that only overwrites a field with each element stays MERGE-ALL.
//
// Each root is interpreted abstractly: a worklist over basic blocks (lowest block first) with an
// operand stack and locals of abstract values (state handle, restored Iterable, iterator,
// hasNext() result, element, copy, size, stream, optional, isRestored() result, constants,
// lambdas) and facts that hold on every path (isRestored() was true; the elements are known to be
// non-empty, exactly one, at most one; this iterator's hasNext() was true; on one edge of such a
// comparison with the subtask index or parallelism). Conditional branches add facts on their
// edges; a branch on a value that is false on every path takes one edge only (the set of
// registered state names asked whether it contains a descriptor object rather than a name: never
// true). Calls are followed into static, private, final and super methods and methods of the
// analysed object in the given classes, MaxDepth deep (default 5); recursion is cut. A virtual
// call runs the method its declared type has in the classes, or on an enum every constant body
// that declares it (the enum's anonymous subclasses in its InnerClasses; the constant is chosen at
// run time) besides the enum's own, or escapes when one of those classes is missing. An interface
// or abstract call runs the implementations the analysed class names, or the candidates that
// implement it; when neither exists and the call carries the restored elements or a state handle,
// every implementation the inputs hold (the closed world of a job jar, which bundles its
// connectors: at most 8 methods over at most 4,096 subtypes, each concrete subtype resolving to
// code in the inputs, or the call stays an escape; classes outside the inputs, such as Flink's own
// on the cluster's classpath, are not seen). The events of all of them label the state, so the
// worst wins. Calls on a logger (SLF4J, Log4j, JUL, commons-logging) only format their arguments
// and are not escapes. Library calls are modelled by tables (models.go): receiver methods of
// Iterable, Iterator, Stream, Optional, ListState and BroadcastState, and static helpers matched
// by class-name suffix, so shaded copies count as Guava's Iterables/Iterators/Lists, Flink's
// CollectionUtil, Kotlin's CollectionsKt (first, single, …) and Scala's converters (asScala; head,
// headOption on the result). Loops are the ranges of back edges; a next() is "in a loop over the
// iterator" when the same loop also calls that iterator's hasNext().
//
// State names are constant-propagated: ldc strings, ConstantValue attributes, static fields set
// once in <clinit>, fields every constructor sets to one constant (chaining into superclass
// constructors), StringBuilder and makeConcatWithConstants over constants. Anything else is
// reported with the name "?" (NameNotConstant) and a NameNote "not constant: " and where the
// descriptor was built.
//
// # Labels
//
// The first rule that matches any event of a state wins (label.go):
//
//	ONE-UNGUARDED    next(), get(0), head, first(), findFirst().get() with no fact that an
//	                 element exists (hasNext() true, !isEmpty(), size() > 0 on the path), or an
//	                 explicit check that throws when there is none
//	EXACTLY-ONE      getOnlyElement(it), single(), or a check that throws unless size() == 1
//	                 (`if (size() != 1) throw …`, checkArgument/checkState(size() == 1))
//	AT-MOST-ONE      getOnlyElement(it, default), singleOrNull(), a guarded next() followed by
//	                 hasNext() on the same iterator, a check that throws when size() > 1, one
//	                 that throws unless size() == 1 (or getOnlyElement) where the elements are
//	                 known non-empty, or a loop that throws when an earlier element was seen
//	FIRST-ONLY       a guarded next() outside a loop over the iterator (a for-each with break),
//	                 getFirst(it, default), firstOrNull(), headOption, findFirst().orElse(…),
//	                 unless the rest is read in a loop too (then MERGE-ALL)
//	UNKNOWN          the Iterable, an iterator or stream over it is stored in a field or passed
//	                 to code outside the classes
//	ORDER-DEPENDENT  getLast/last, get(i) with a computed index outside a loop, a decisive
//	                 comparison of the subtask index or parallelism with an element's value, or a
//	                 count check that runs only on one edge of such a comparison
//	UNION-FILTER     union state read in a loop that computes a remainder, asks for the subtask
//	                 index or parallelism, tests membership, or puts elements into a map (kept by
//	                 key for a later per-subtask pick, as FlinkKafkaConsumerBase does)
//	MERGE-ALL        a loop over all elements, forEach, addAll, a copy kept in a field
//	UNKNOWN          the state handle itself is passed to code outside the classes
//	NOT-READ         none of these: the state is not read on the restore path (e.g. only in
//	                 snapshotState, or registered only in a method no restore path calls)
//
// restoredOnly is true when every decisive read happens where isRestored() was true.
//
// # Evidence
//
// testdata/java (fixtures written independently from the patterns, expected.tsv) and
// testdata/own are compiled with javac and checked by TestJavaFixtures and TestOwnFixtures
// (`make restorecode-java`; skipped without a JDK). TestUpstreamAgreement compares the analysis of
// the catalog's real classes, compiled from upstream sources by tools/upstream-classes, with a hand
// reading of them; COMPARISON.md holds the table (class, state, hand label, analysis label,
// agreement) and the upstream commits used.
//
// # Limits
//
// Per input: MaxEntries entries (default 200,000: a jar of 500,000 classes is refused before
// any class is read, after archive/zip has read its central directory) and MaxClassBytes per
// class (8 MiB). Per class: MaxSteps interpreted instructions over all its roots and helpers
// (default 2,000,000; a class that exhausts them gets one Error and keeps what was found). Per
// method: max_locals + max_stack ≤ 4,096 and blocks × that ≤ 4,000,000 abstract values.
// Classes are screened by the words in their constant pool and parsed on demand, so memory
// follows the candidate classes, not the jar. The subtype index of the closed world is built once,
// on the first call that needs it, from the headers of every class (one more read of the inputs,
// a step per class); a jar whose restore code never needs it pays nothing. The context is
// checked between classes and every 1,024 instructions.
// jsr/ret subroutines (pre-Java-6 finally) are not analysed and give an Error.
package restorecode
