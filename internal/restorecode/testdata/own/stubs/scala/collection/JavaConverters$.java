package scala.collection;

import scala.collection.convert.AsScala;

/** Test stand-in for the module class scalac calls for JavaConverters (JavaConverters$.MODULE$). */
public final class JavaConverters$ {
    public static final JavaConverters$ MODULE$ = new JavaConverters$();

    public <A> AsScala<Iterable<A>> iterableAsScalaIterableConverter(java.lang.Iterable<A> i) {
        return null;
    }
}
