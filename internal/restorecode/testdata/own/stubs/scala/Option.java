package scala;

/** Test stand-in for scala.Option. */
public abstract class Option<A> {
    public abstract A get();

    public abstract A getOrElse(A dflt);
}
