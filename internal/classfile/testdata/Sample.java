package sample;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/** Exercises the constructs the reader must handle; compiled by reader_test.go. */
public class Sample implements Runnable, java.io.Serializable {
    static final String NAME = "pending-commit";
    static final long BIG = 1L << 40;
    static final double PI = 3.14159;
    static final float F = 1.5f;
    static final int I = 123456;
    private final List<String> items = new ArrayList<>();

    class Inner {
        int x = items.size();
    }

    public void run() {
        Supplier<String> s = () -> NAME + items.size();
        items.add(s.get());
    }

    int dense(int k) {
        switch (k) {
            case 1: return 10;
            case 2: return 20;
            case 3: return 30;
            case 4: return 40;
            default: return -1;
        }
    }

    int sparse(int k) {
        switch (k) {
            case -100000: return 1;
            case 7: return 2;
            case 1000000: return 3;
            default: return 0;
        }
    }

    String concat(String a, int b) {
        return "x" + a + "-" + b;
    }

    int tryCatch(String v) {
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            return -1;
        } finally {
            items.clear();
        }
    }

    long arrays() {
        int[][] grid = new int[3][4];
        long[] ls = new long[2];
        ls[1] = BIG;
        Object[] os = new Object[1];
        os[0] = grid;
        return ls[1] + grid.length + os.length;
    }
}
