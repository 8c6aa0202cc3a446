// Stub of Apache Flink's API for compiling the restore-analysis fixtures: only the members the
// fixtures use, with the real packages, names and erased signatures. Not Flink's source.

package org.apache.flink.core.io;

import java.io.IOException;

public interface SimpleVersionedSerializer<E> {
    int getVersion();

    byte[] serialize(E obj) throws IOException;

    E deserialize(int version, byte[] serialized) throws IOException;
}
