package scala.collection;

/** Test stand-in for scala.collection.Iterable. */
public interface Iterable<A> {
    A head();

    scala.Option<A> headOption();
}
