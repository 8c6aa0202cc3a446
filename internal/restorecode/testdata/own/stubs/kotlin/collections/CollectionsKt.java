package kotlin.collections;

/** Test stand-in for the Kotlin standard library's collection extensions. */
public final class CollectionsKt {
    public static <T> T first(Iterable<T> it) {
        return it.iterator().next();
    }

    public static <T> T single(Iterable<T> it) {
        return it.iterator().next();
    }

    public static <T> T singleOrNull(Iterable<T> it) {
        return null;
    }
}
