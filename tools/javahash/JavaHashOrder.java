// JavaHashOrder prints golden vectors for Preflight's model of java.util.HashMap iteration order
// (internal/rescale/javahash.go). It generates adversarial sets of state names deterministically
// (the Go test generates the same sets with the same generator), fills java.util.HashMap the way
// Flink's restore path does, and prints one 64-bit FNV-1a hash of all the resulting iteration
// orders per set. It uses only the JDK.
//
//   javac -d /tmp/jh tools/javahash/JavaHashOrder.java && java -cp /tmp/jh JavaHashOrder > golden.txt
//   java -cp /tmp/jh JavaHashOrder dump ID     # the orders of one set, one scenario per line
//
// Scenarios per set (names S, distinct, in generated order):
//   A put into new HashMap<>()                         (a state backend's registry)
//   B put into new HashMap<>(n)                        (a handle's name map read by Flink <= 1.17)
//   C put into new HashMap<>(ceil(n / 0.75f), 0.75f)   (Flink >= 1.18: newHashMapWithExpectedSize)
//   D computeIfAbsent into new HashMap<>()             (groupByStateMode, one handle)
//   E D, then computeIfAbsent of S[0] again            (a later handle's call resizes a full table)
//   F groupByStateMode over 1 to 3 handles whose name maps are built as in C
//   G the same with name maps built as in B
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

public final class JavaHashOrder {
    static final int SETS = 10240;
    static final int[] BIG = {1000, 5000, 10000, 12289, 20000, 24577, 49153, 50000, 98305, 100000};
    static final String ASCII =
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.";
    static final int[] NON_ASCII = {0xE9, 0xDF, 0x3A9, 0x4E2D, 0xE000, 0xFF21, 0x1F600, 0x10348};
    static final int[] THRESHOLDS = {6, 7, 8, 9, 12, 13, 24, 25, 48, 49, 96, 97, 192, 193, 384, 385, 768, 769};
    static final String[] FLINK_NAMES = {
        "SourceReaderState", "topic-partition-offset-states", "expired-files", "writer_raw_states",
        "pending-committables", "bucket-states", "max-parallelism", "state", "buffer", "offsets"
    };

    /** SplitMix64. */
    static final class Rand {
        long s;

        Rand(long seed) {
            s = seed;
        }

        long next() {
            s += 0x9E3779B97F4A7C15L;
            long z = s;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }

        int nextInt(int bound) {
            return (int) Long.remainderUnsigned(next(), bound);
        }
    }

    static String chars(Rand r, int len) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < len; i++) {
            if (r.nextInt(16) == 0) {
                b.appendCodePoint(NON_ASCII[r.nextInt(NON_ASCII.length)]);
            } else {
                b.append(ASCII.charAt(r.nextInt(ASCII.length())));
            }
        }
        return b.toString();
    }

    static String randName(Rand r) {
        return chars(r, 1 + r.nextInt(12));
    }

    static int spread(String s) {
        int h = s.hashCode();
        return h ^ (h >>> 16);
    }

    static void shuffle(Rand r, List<String> l) {
        for (int i = l.size() - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            String t = l.get(i);
            l.set(i, l.get(j));
            l.set(j, t);
        }
    }

    /** 2^k names with one hashCode: prefix, k blocks of "Aa" or "BB", suffix. */
    static List<String> equalHashFamily(Rand r, int k) {
        String prefix = chars(r, r.nextInt(4));
        String suffix = chars(r, r.nextInt(3));
        List<String> out = new ArrayList<>();
        for (int m = 0; m < (1 << k); m++) {
            StringBuilder b = new StringBuilder(prefix);
            for (int bit = 0; bit < k; bit++) {
                b.append((m >> bit & 1) == 1 ? "BB" : "Aa");
            }
            out.add(b.append(suffix).toString());
        }
        shuffle(r, out);
        return out;
    }

    /** n names whose spread hashes agree on the bits of mask. */
    static List<String> lowBitFamily(Rand r, int mask, int n) {
        int target = r.nextInt(mask + 1);
        int counter = r.nextInt(1000000);
        List<String> out = new ArrayList<>();
        while (out.size() < n) {
            String s = "c" + counter++;
            if ((spread(s) & mask) == target) {
                out.add(s);
            }
        }
        return out;
    }

    static List<String> distinctRandom(Rand r, int n) {
        Set<String> seen = new HashSet<>();
        List<String> out = new ArrayList<>();
        while (out.size() < n) {
            String s = randName(r);
            if (seen.add(s)) {
                out.add(s);
            }
        }
        return out;
    }

    static List<String> dedupe(List<String> l) {
        Set<String> seen = new HashSet<>();
        List<String> out = new ArrayList<>();
        for (String s : l) {
            if (seen.add(s)) {
                out.add(s);
            }
        }
        return out;
    }

    /** The name set with this id; kind is id % 8 below SETS, then the big sets. */
    static List<String> nameSet(int id) {
        Rand r = new Rand(0x5EED0000L + id);
        if (id >= SETS) {
            return distinctRandom(r, BIG[id - SETS]);
        }
        List<String> l = new ArrayList<>();
        switch (id % 8) {
            case 0:
                return distinctRandom(r, 1 + r.nextInt(40));
            case 1:
                return distinctRandom(r, Math.max(1, THRESHOLDS[r.nextInt(THRESHOLDS.length)] + r.nextInt(3) - 1));
            case 2: {
                List<String> f = equalHashFamily(r, 3 + r.nextInt(5));
                return new ArrayList<>(f.subList(0, 1 + r.nextInt(f.size())));
            }
            case 3: {
                int[] masks = {15, 31, 63, 127};
                l.addAll(lowBitFamily(r, masks[r.nextInt(4)], 7 + r.nextInt(14)));
                l.addAll(distinctRandom(r, r.nextInt(200)));
                break;
            }
            case 4: {
                int families = 2 + r.nextInt(4);
                for (int f = 0; f < families; f++) {
                    List<String> fam = equalHashFamily(r, 3 + r.nextInt(2));
                    l.addAll(fam.subList(0, Math.min(fam.size(), 6 + r.nextInt(7))));
                }
                l.addAll(distinctRandom(r, r.nextInt(300)));
                break;
            }
            case 5:
                return distinctRandom(r, 100 + r.nextInt(500));
            case 6: {
                int n = 1 + r.nextInt(64);
                for (int i = 0; i < n; i++) {
                    String base = FLINK_NAMES[r.nextInt(FLINK_NAMES.length)];
                    l.add(r.nextInt(3) == 0 ? base : base + "-" + r.nextInt(100));
                }
                return dedupe(l);
            }
            default: {
                l.addAll(lowBitFamily(r, 63, 8 + r.nextInt(33)));
                l.addAll(distinctRandom(r, 32 + r.nextInt(369)));
                break;
            }
        }
        List<String> out = dedupe(l);
        shuffle(r, out);
        return out;
    }

    static int expectedSizeCapacity(int n) {
        if (n <= 2) {
            return n + 1;
        }
        return n < (Integer.MAX_VALUE / 2 + 1) ? (int) Math.ceil(n / 0.75f) : Integer.MAX_VALUE;
    }

    static List<String> putOrder(List<String> names, HashMap<String, Boolean> m) {
        for (String s : names) {
            m.put(s, Boolean.TRUE);
        }
        return new ArrayList<>(m.keySet());
    }

    /** RoundRobinOperatorStateRepartitioner.groupByStateMode for one mode over handles. */
    static List<String> grouping(List<List<String>> handles, boolean expectedSize) {
        Map<String, Boolean> byName = new HashMap<>();
        for (List<String> h : handles) {
            HashMap<String, Boolean> handleMap = expectedSize
                    ? new HashMap<>(expectedSizeCapacity(h.size()), 0.75f)
                    : new HashMap<>(h.size());
            for (String s : putOrder(h, handleMap)) {
                byName.computeIfAbsent(s, k -> Boolean.TRUE);
            }
        }
        return new ArrayList<>(byName.keySet());
    }

    static List<List<String>> handles(int id, List<String> names) {
        int h = 1 + id % 3;
        List<List<String>> out = new ArrayList<>();
        for (int j = 0; j < h; j++) {
            List<String> l = new ArrayList<>();
            for (int i = 0; i < names.size(); i++) {
                if (h == 1 || (i + j) % 5 != 0) {
                    l.add(names.get(i));
                }
            }
            out.add(l);
        }
        return out;
    }

    static List<List<String>> scenarios(int id, List<String> s) {
        List<List<String>> out = new ArrayList<>();
        out.add(putOrder(s, new HashMap<>()));
        out.add(putOrder(s, new HashMap<>(s.size())));
        out.add(putOrder(s, new HashMap<>(expectedSizeCapacity(s.size()), 0.75f)));
        HashMap<String, Boolean> d = new HashMap<>();
        for (String x : s) {
            d.computeIfAbsent(x, k -> Boolean.TRUE);
        }
        out.add(new ArrayList<>(d.keySet()));
        d.computeIfAbsent(s.get(0), k -> Boolean.TRUE);
        out.add(new ArrayList<>(d.keySet()));
        out.add(grouping(handles(id, s), true));
        out.add(grouping(handles(id, s), false));
        return out;
    }

    static final long FNV_OFFSET = 0xcbf29ce484222325L;
    static final long FNV_PRIME = 0x100000001b3L;

    static long fnv(long h, byte b) {
        return (h ^ (b & 0xff)) * FNV_PRIME;
    }

    static long hashOrders(List<List<String>> orders) {
        long h = FNV_OFFSET;
        for (int k = 0; k < orders.size(); k++) {
            h = fnv(h, (byte) ('A' + k));
            for (String s : orders.get(k)) {
                for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
                    h = fnv(h, b);
                }
                h = fnv(h, (byte) '\n');
            }
        }
        return h;
    }

    /** Signs of String.compareTo over random pairs with shared prefixes. */
    static long compareVectors() {
        Rand r = new Rand(0xC0FFEE);
        long h = FNV_OFFSET;
        for (int i = 0; i < 20000; i++) {
            String p = chars(r, r.nextInt(3));
            String a = p + chars(r, r.nextInt(4));
            String b = p + chars(r, r.nextInt(4));
            h = fnv(h, (byte) Integer.signum(a.compareTo(b)));
        }
        return h;
    }

    public static void main(String[] args) {
        if (args.length == 2 && args[0].equals("dump")) {
            int id = Integer.parseInt(args[1]);
            List<String> s = nameSet(id);
            List<List<String>> orders = scenarios(id, s);
            for (int k = 0; k < orders.size(); k++) {
                System.out.println((char) ('A' + k) + " " + String.join(" ", orders.get(k)));
            }
            return;
        }
        StringBuilder out = new StringBuilder();
        out.append("# Golden vectors for internal/rescale/javahash.go, written by tools/javahash/JavaHashOrder.java\n");
        out.append("# with java.util.HashMap. Per name set: id, names, FNV-1a-64 of the iteration orders of\n");
        out.append("# scenarios A-G (see the program). Check against the JDK: make javahash-golden\n");
        out.append(String.format("compare %016x%n", compareVectors()));
        for (int id = 0; id < SETS + BIG.length; id++) {
            List<String> s = nameSet(id);
            out.append(String.format("%d %d %016x%n", id, s.size(), hashOrders(scenarios(id, s))));
        }
        System.out.print(out);
    }
}
