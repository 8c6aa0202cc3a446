package org.apache.flink.api.java.tuple;

/** Test stand-in for Flink's Tuple2. */
public class Tuple2<A, B> {
    public A f0;
    public B f1;
}
