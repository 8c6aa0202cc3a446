package restorecode

import (
	"strings"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// effect is what a modelled library call does with restored elements.
type effect uint8

const (
	eNone      effect = iota
	eIterable         // result: the restored elements (ListState.get())
	eIterator         // result: an iterator over them
	eHasNext          // result: boolean, the iterator has an element
	eNext             // takes one element from the iterator
	eGetIndex         // takes the element at an index (get(0) on a copy)
	eSize             // result: the element count
	eIsEmpty          // result: boolean, no element
	eNonEmpty         // result: boolean, some element
	eStream           // result: a stream over the elements
	eFilter           // result: the same elements, filtered
	eFindFirst        // result: an optional first element
	eOptGet           // takes the optional's element, throwing when there is none
	eOptSafe          // takes the optional's element or a default
	ePresent          // result: boolean, the optional holds an element
	eAll              // reads every element
	eCopy             // result: a list of all the elements
	eSame             // result: the same elements behind a wrapper (asScala, views)
	eFirst            // takes the first element, throwing when there is none
	eFirstOr          // takes the first element or a default
	eOnly             // requires exactly one element
	eOnlyOr           // requires at most one element
	eLast             // takes the last element: depends on the order
	eKeyed            // a broadcast state lookup by key: reads the whole map
	eDedup            // result: a collection from the elements whose size is not their count (a set, collect)
)

// Methods called on a receiver the analysis tracks, by receiver group and method name.
var (
	stateMethods = map[string]effect{
		"get": eIterable, "entries": eIterable, "immutableEntries": eIterable, "keys": eIterable,
		"values": eIterable, "iterator": eIterator, "contains": eKeyed,
		"update": eNone, "add": eNone, "addAll": eNone, "clear": eNone, "put": eNone, "putAll": eNone, "remove": eNone,
	}
	collectionMethods = map[string]effect{
		"iterator": eIterator, "spliterator": eStream, "stream": eStream, "parallelStream": eStream,
		"forEach": eAll, "foreach": eAll, "size": eSize, "length": eSize, "isEmpty": eIsEmpty, "nonEmpty": eNonEmpty,
		"get": eGetIndex, "apply": eGetIndex, "getFirst": eFirst, "head": eFirst, "headOption": eFindFirst,
		"getLast": eLast, "last": eLast, "lastOption": eLast, "toArray": eCopy, "toList": eCopy, "toSeq": eCopy,
		"toVector": eCopy, "toBuffer": eCopy, "toSet": eDedup, "toIndexedSeq": eCopy, "contains": eAll,
		"containsAll": eAll, "subList": eSame, "asScala": eSame, "asJava": eSame, "map": eSame, "filter": eFilter,
		"removeIf": eFilter, "foldLeft": eAll, "reduce": eAll, "max": eAll, "min": eAll, "sum": eAll,
		"equals": eNone, "hashCode": eNone, "toString": eNone, "add": eNone, "addAll": eNone, "clear": eNone,
		"remove": eNone, "sort": eNone,
		// a map collected from the elements (Collectors.groupingBy, toMap): its views hold what
		// was collected, not one entry per element
		"entrySet": eDedup, "keySet": eDedup,
	}
	iteratorMethods = map[string]effect{
		"hasNext": eHasNext, "next": eNext, "forEachRemaining": eAll, "remove": eNone, "asScala": eSame,
		"foreach": eAll, "hasNext$": eHasNext,
	}
	streamMethods = map[string]effect{
		"findFirst": eFindFirst, "findAny": eFindFirst, "filter": eFilter, "map": eSame, "mapToObj": eSame,
		"mapToInt": eSame, "mapToLong": eSame, "flatMap": eSame, "sorted": eSame, "distinct": eSame, "peek": eSame,
		"boxed": eSame, "limit": eSame, "skip": eSame, "sequential": eSame, "parallel": eSame, "unordered": eSame,
		"forEach": eAll, "forEachOrdered": eAll, "reduce": eAll, "anyMatch": eAll, "allMatch": eAll,
		"noneMatch": eAll, "max": eAll, "min": eAll, "sum": eAll, "collect": eDedup, "toList": eCopy,
		"toArray": eCopy, "count": eSize, "iterator": eIterator,
	}
	optionalMethods = map[string]effect{
		"get": eOptGet, "orElseThrow": eOptGet, "orElse": eOptSafe, "orElseGet": eOptSafe, "ifPresent": eOptSafe,
		"ifPresentOrElse": eOptSafe, "map": eOptSafe, "flatMap": eOptSafe, "filter": eOptSafe, "or": eOptSafe,
		"getOrElse": eOptSafe, "fold": eOptSafe, "orNull": eOptSafe, "foreach": eOptSafe,
		"isPresent": ePresent, "isDefined": ePresent, "nonEmpty": ePresent, "isEmpty": eIsEmpty,
	}
)

// receiverMethods picks the table for a receiver kind.
func receiverMethods(k kind) map[string]effect {
	switch k {
	case kState:
		return stateMethods
	case kIterable, kCopy:
		return collectionMethods
	case kIterator:
		return iteratorMethods
	case kStream:
		return streamMethods
	case kOptional:
		return optionalMethods
	}
	return nil
}

// staticModel is a library method taking the elements as an argument: owner is matched by
// suffix so that shaded copies (org/apache/flink/shaded/guava31/com/google/common/collect/Iterables)
// count as the original; argc distinguishes overloads (-1: any).
type staticModel struct {
	owner, name string
	argc        int
	eff         effect
}

var staticModels = []staticModel{
	{"com/google/common/collect/Iterables", "getOnlyElement", 1, eOnly},
	{"com/google/common/collect/Iterables", "getOnlyElement", 2, eOnlyOr},
	{"com/google/common/collect/Iterables", "getFirst", -1, eFirstOr},
	{"com/google/common/collect/Iterables", "getLast", -1, eLast},
	{"com/google/common/collect/Iterables", "get", 2, eGetIndex},
	{"com/google/common/collect/Iterables", "get", 3, eFirstOr},
	{"com/google/common/collect/Iterables", "isEmpty", -1, eIsEmpty},
	{"com/google/common/collect/Iterables", "size", -1, eSize},
	{"com/google/common/collect/Iterables", "addAll", -1, eAll},
	{"com/google/common/collect/Iterables", "contains", -1, eAll},
	{"com/google/common/collect/Iterables", "toArray", -1, eCopy},
	{"com/google/common/collect/Iterables", "filter", -1, eFilter},
	{"com/google/common/collect/Iterables", "transform", -1, eSame},
	{"com/google/common/collect/Iterables", "any", -1, eAll},
	{"com/google/common/collect/Iterables", "all", -1, eAll},
	{"com/google/common/collect/Iterators", "getOnlyElement", 1, eOnly},
	{"com/google/common/collect/Iterators", "getOnlyElement", 2, eOnlyOr},
	{"com/google/common/collect/Iterators", "getNext", -1, eFirstOr},
	{"com/google/common/collect/Iterators", "getLast", -1, eLast},
	{"com/google/common/collect/Iterators", "size", -1, eSize},
	{"com/google/common/collect/Iterators", "addAll", -1, eAll},
	{"com/google/common/collect/Iterators", "toArray", -1, eCopy},
	{"com/google/common/collect/Lists", "newArrayList", 1, eCopy},
	{"com/google/common/collect/Lists", "newLinkedList", 1, eCopy},
	{"com/google/common/collect/Sets", "newHashSet", 1, eDedup},
	{"com/google/common/collect/ImmutableList", "copyOf", 1, eCopy},
	{"com/google/common/collect/ImmutableSet", "copyOf", 1, eDedup},
	{"com/google/common/collect/FluentIterable", "from", 1, eSame},
	{"com/google/common/collect/Streams", "stream", 1, eStream},
	{"org/apache/flink/util/CollectionUtil", "iterableToList", 1, eCopy},
	{"org/apache/flink/util/CollectionUtil", "iteratorToList", 1, eCopy},
	{"org/apache/flink/util/CollectionUtil", "isNullOrEmpty", 1, eIsEmpty},
	{"org/apache/flink/util/IterableUtils", "toStream", 1, eStream},
	{"java/util/stream/StreamSupport", "stream", -1, eStream},
	{"java/util/Collections", "unmodifiableList", 1, eSame},
	{"java/util/Collections", "unmodifiableCollection", 1, eSame},
	{"java/util/Collections", "max", -1, eAll},
	{"java/util/Collections", "sort", -1, eNone},
	{"java/util/Collections", "min", -1, eAll},
	{"java/util/List", "copyOf", 1, eCopy},
	{"java/util/Set", "copyOf", 1, eDedup},
	{"kotlin/collections/CollectionsKt", "first", 1, eFirst},
	{"kotlin/collections/CollectionsKt", "firstOrNull", 1, eFirstOr},
	{"kotlin/collections/CollectionsKt", "single", 1, eOnly},
	{"kotlin/collections/CollectionsKt", "singleOrNull", 1, eOnlyOr},
	{"kotlin/collections/CollectionsKt", "last", 1, eLast},
	{"kotlin/collections/CollectionsKt", "lastOrNull", 1, eLast},
	{"kotlin/collections/CollectionsKt", "elementAt", 2, eGetIndex},
	{"kotlin/collections/CollectionsKt", "toList", 1, eCopy},
	{"kotlin/collections/CollectionsKt", "toMutableList", 1, eCopy},
	{"kotlin/collections/CollectionsKt", "toSet", 1, eDedup},
	{"kotlin/collections/CollectionsKt", "count", 1, eSize},
	{"scala/collection/JavaConverters$", "", 1, eSame}, // every *AsScala*Converter
	{"scala/collection/JavaConversions$", "", 1, eSame},
	{"scala/jdk/CollectionConverters$", "", 1, eSame}, // IterableHasAsScala, ListHasAsScala...
	{"scala/jdk/javaapi/CollectionConverters", "asScala", 1, eSame},
}

// lookupStatic finds the model of owner.name with argc arguments.
func lookupStatic(owner, name string, argc int) (effect, bool) {
	for _, m := range staticModels {
		if (m.name == name || m.name == "") && (m.argc == -1 || m.argc == argc) && hasSuffixClass(owner, m.owner) {
			return m.eff, true
		}
	}
	return eNone, false
}

// hasSuffixClass: owner is cls or a shaded copy of it (prefix ending in '/').
func hasSuffixClass(owner, cls string) bool {
	return owner == cls || strings.HasSuffix(owner, "/"+cls) || strings.HasSuffix(owner, "."+cls)
}

// copyConstructors build a collection holding all elements of their argument.
var copyConstructors = []string{
	"java/util/ArrayList", "java/util/LinkedList", "java/util/HashSet", "java/util/LinkedHashSet",
	"java/util/TreeSet", "java/util/ArrayDeque", "java/util/PriorityQueue", "java/util/concurrent/CopyOnWriteArrayList",
}

// registrations are the OperatorStateStore methods that register operator state, with the mode.
// The call's owner must be an operator state store (see registration): RuntimeContext and
// KeyedStateStore have a getListState too, for keyed state.
var registrations = map[string]string{
	"getListState": SplitDistribute, "getUnionListState": Union, "getBroadcastState": Broadcast,
	"getOperatorState": SplitDistribute, "getSerializableListState": SplitDistribute,
}

// filterNames are calls that, inside a loop over union state, show that the loop keeps only some
// elements (those this subtask owns).
var filterNames = map[string]bool{
	"getIndexOfThisSubtask": true, "getNumberOfParallelSubtasks": true, "getParallelism": true,
	"contains": true, "containsKey": true, "assign": true, "assignKeyToParallelOperator": true,
	"computeOperatorIndexForKeyGroup": true, "computeKeyGroupRangeForOperatorIndex": true,
}

// mapPutNames put an element into a map: in a loop over union state, the map keeps the elements
// by key for a later per-subtask pick (FlinkKafkaConsumerBase's restoredState).
var mapPutNames = map[string]bool{"put": true, "putIfAbsent": true, "computeIfAbsent": true, "merge": true}

// passThrough are static checks that return their first argument (Preconditions.checkNotNull,
// Objects.requireNonNull, shaded or not).
var passThrough = map[string]bool{"checkNotNull": true, "requireNonNull": true}

// registration returns the mode of a call that registers operator state.
func registration(ref classfile.MemberRef) (string, bool) {
	mode, ok := registrations[ref.Name]
	simple := ref.Class[strings.LastIndexByte(ref.Class, '/')+1:]
	// Paimon's sink.state.StateStore wraps the operator state store under the same method names.
	if !ok || !strings.Contains(simple, "OperatorState") && simple != "StateStore" {
		return "", false
	}
	return mode, true
}

// loggers are the logging APIs whose calls only format their arguments (matched by suffix, so
// shaded copies count): handing them the restored elements assumes nothing about their number.
var loggers = []string{"org/slf4j/Logger", "org/apache/logging/log4j/Logger", "org/apache/log4j/Logger",
	"org/apache/log4j/Category", "java/util/logging/Logger", "org/apache/commons/logging/Log",
	"java/lang/System$Logger", "com/typesafe/scalalogging/Logger"}

func isLogger(class string) bool {
	for _, l := range loggers {
		if hasSuffixClass(class, l) {
			return true
		}
	}
	return false
}

// checkNames throw unless their boolean argument holds (Guava's and Flink's Preconditions).
var checkNames = map[string]bool{"checkArgument": true, "checkState": true}

// taskNames return this subtask's index or the parallelism (TaskInfo, RuntimeContext): a test
// of the elements against them, or a count check that runs only under a test of them, depends on
// which subtask receives which elements.
var taskNames = map[string]bool{"getIndexOfThisSubtask": true, "getNumberOfParallelSubtasks": true,
	"getMaxNumberOfParallelSubtasks": true}
