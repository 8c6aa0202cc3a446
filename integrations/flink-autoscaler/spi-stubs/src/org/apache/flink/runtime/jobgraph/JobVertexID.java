package org.apache.flink.runtime.jobgraph;

import org.apache.flink.util.AbstractID;

/** Compile-only mirror of Flink's {@code JobVertexID} (flink-runtime). */
public class JobVertexID extends AbstractID {

    private static final long serialVersionUID = 1L;

    public JobVertexID() {
        super();
    }

    public JobVertexID(byte[] bytes) {
        super(bytes);
    }

    public JobVertexID(long lowerPart, long upperPart) {
        super(lowerPart, upperPart);
    }

    public static JobVertexID fromHexString(String hexString) {
        return new JobVertexID(hexToBytes(hexString));
    }
}
