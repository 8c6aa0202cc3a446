package org.apache.flink.api.common;

import org.apache.flink.util.AbstractID;

/** Compile-only mirror of Flink's {@code JobID} (flink-core). */
public final class JobID extends AbstractID {

    private static final long serialVersionUID = 1L;

    public JobID() {
        super();
    }

    public JobID(long lowerPart, long upperPart) {
        super(lowerPart, upperPart);
    }

    public JobID(byte[] bytes) {
        super(bytes);
    }

    public static JobID generate() {
        return new JobID();
    }

    public static JobID fromHexString(String hexString) {
        return new JobID(hexToBytes(hexString));
    }
}
