package com.github.flinkpreflight.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** The java.util.logging records of one class's logger (the plugins log there without SLF4J). */
public final class LogCapture extends Handler implements AutoCloseable {
    private final Logger logger;
    public final List<LogRecord> records = new CopyOnWriteArrayList<>();

    public LogCapture(Class<?> owner) {
        logger = Logger.getLogger(owner.getName());
        logger.addHandler(this);
    }

    @Override
    public void publish(LogRecord r) {
        records.add(r);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        logger.removeHandler(this);
    }

    /** Every record as "LEVEL message", one a line. */
    public String all() {
        List<String> l = new ArrayList<>();
        for (LogRecord r : records) {
            l.add(r.getLevel() + " " + r.getMessage());
        }
        return String.join("\n", l);
    }
}
