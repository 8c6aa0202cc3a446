package org.apache.flink.util;

import java.util.Random;

/**
 * Compile-only mirror of Flink's {@code AbstractID} (flink-core): a 128-bit id whose
 * {@link #toString()} is the 32-character lowercase hex of the lower part then the upper part,
 * each big-endian, as Flink prints JobVertexIDs and JobIDs. Serialization and
 * {@code toShortString()} are left out.
 */
public class AbstractID implements Comparable<AbstractID>, java.io.Serializable {

    private static final long serialVersionUID = 1L;

    private static final Random RND = new Random();

    public static final int SIZE = 16;

    protected final long upperPart;

    protected final long lowerPart;

    public AbstractID(byte[] bytes) {
        if (bytes == null || bytes.length != SIZE) {
            throw new IllegalArgumentException("an id has " + SIZE + " bytes");
        }
        this.lowerPart = toLong(bytes, 0);
        this.upperPart = toLong(bytes, 8);
    }

    public AbstractID(long lowerPart, long upperPart) {
        this.lowerPart = lowerPart;
        this.upperPart = upperPart;
    }

    public AbstractID(AbstractID id) {
        this(id.lowerPart, id.upperPart);
    }

    public AbstractID() {
        this(RND.nextLong(), RND.nextLong());
    }

    public long getLowerPart() {
        return lowerPart;
    }

    public long getUpperPart() {
        return upperPart;
    }

    public byte[] getBytes() {
        byte[] b = new byte[SIZE];
        for (int i = 0; i < 8; i++) {
            b[7 - i] = (byte) (lowerPart >>> (8 * i));
            b[15 - i] = (byte) (upperPart >>> (8 * i));
        }
        return b;
    }

    public String toHexString() {
        StringBuilder sb = new StringBuilder(2 * SIZE);
        for (byte x : getBytes()) {
            sb.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return sb.toString();
    }

    /** Parses 32 hex characters; the inverse of {@link #toHexString()}. */
    protected static byte[] hexToBytes(String hex) {
        if (hex == null || hex.length() != 2 * SIZE) {
            throw new IllegalArgumentException("an id is " + (2 * SIZE) + " hex characters: " + hex);
        }
        byte[] b = new byte[SIZE];
        for (int i = 0; i < SIZE; i++) {
            int hi = Character.digit(hex.charAt(2 * i), 16);
            int lo = Character.digit(hex.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                throw new IllegalArgumentException("not a hex id: " + hex);
            }
            b[i] = (byte) ((hi << 4) | lo);
        }
        return b;
    }

    private static long toLong(byte[] b, int off) {
        long l = 0;
        for (int i = 0; i < 8; i++) {
            l = (l << 8) | (b[off + i] & 0xffL);
        }
        return l;
    }

    @Override
    public boolean equals(Object obj) {
        if (!(obj instanceof AbstractID)) {
            return false;
        }
        AbstractID o = (AbstractID) obj;
        return o.lowerPart == lowerPart && o.upperPart == upperPart;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(lowerPart) ^ Long.hashCode(upperPart);
    }

    @Override
    public int compareTo(AbstractID o) {
        int c = Long.compare(upperPart, o.upperPart);
        return c != 0 ? c : Long.compare(lowerPart, o.lowerPart);
    }

    @Override
    public String toString() {
        return toHexString();
    }
}
