// Stub of SLF4J's API for compiling the restore-analysis fixtures: only the members the fixtures
// use, with the real packages, names and erased signatures. Not SLF4J's source.

package org.slf4j;

public final class LoggerFactory {
    private LoggerFactory() {}

    public static Logger getLogger(Class<?> c) {
        return null;
    }
}
