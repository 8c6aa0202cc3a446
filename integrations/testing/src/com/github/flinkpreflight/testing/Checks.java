package com.github.flinkpreflight.testing;

import java.util.Map;
import java.util.Objects;

/** A JUnit-free test runner and assertions for the integrations' tests. */
public final class Checks {

    private Checks() {}

    /** A named test body. */
    public interface Body {
        void run() throws Exception;
    }

    /** Runs the tests in order, prints one line each, and returns the number that failed. */
    public static int runAll(String suite, Map<String, Body> tests) {
        int failed = 0;
        for (Map.Entry<String, Body> t : tests.entrySet()) {
            long start = System.nanoTime();
            try {
                t.getValue().run();
                System.out.printf("ok   %s/%s (%d ms)%n", suite, t.getKey(), (System.nanoTime() - start) / 1_000_000);
            } catch (Throwable e) {
                failed++;
                System.out.printf("FAIL %s/%s: %s%n", suite, t.getKey(), e);
                e.printStackTrace(System.out);
            }
        }
        System.out.printf("%s: %d passed, %d failed%n", suite, tests.size() - failed, failed);
        return failed;
    }

    public static void check(boolean cond, String what) {
        if (!cond) {
            throw new AssertionError(what);
        }
    }

    public static void eq(Object actual, Object expected, String what) {
        if (!Objects.equals(actual, expected)) {
            throw new AssertionError(what + ": got <" + actual + ">, want <" + expected + ">");
        }
    }

    public static void contains(String haystack, String needle, String what) {
        if (haystack == null || !haystack.contains(needle)) {
            throw new AssertionError(what + ": <" + haystack + "> does not contain <" + needle + ">");
        }
    }

    /** Runs body and returns the exception of type t it throws; fails if it throws none. */
    public static <T extends Throwable> T expectThrows(Class<T> t, Body body, String what) {
        try {
            body.run();
        } catch (Throwable e) {
            if (t.isInstance(e)) {
                return t.cast(e);
            }
            throw new AssertionError(what + ": threw " + e + ", want " + t.getSimpleName(), e);
        }
        throw new AssertionError(what + ": threw nothing, want " + t.getSimpleName());
    }
}
