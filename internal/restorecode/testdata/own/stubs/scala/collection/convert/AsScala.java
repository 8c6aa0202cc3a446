package scala.collection.convert;

/** Test stand-in for Scala's AsScala decorator. */
public class AsScala<A> {
    public A asScala() {
        return null;
    }
}
