package com.github.flinkpreflight.common;

import java.lang.reflect.Method;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Logs through SLF4J when the host has it (the operator does, and Flink's plugin class loader
 * always takes {@code org.slf4j} from the operator, so lines land in the operator's log next to
 * its own ScalingVetoed lines or ValidationError events), else through java.util.logging. Looked
 * up reflectively so that the jar needs no logging library to compile or run.
 */
final class PluginLog {

    private final Object slf4j;
    private final Method info;
    private final Method warn;
    private final Logger jul;
    private final String name;
    private final String method;

    private PluginLog(Object slf4j, Method info, Method warn, Logger jul, String name, String method) {
        this.slf4j = slf4j;
        this.info = info;
        this.warn = warn;
        this.jul = jul;
        this.name = name;
        this.method = method;
    }

    /** The log of {@code owner}; {@code method}: the entry point java.util.logging records name. */
    static PluginLog forClass(Class<?> owner, String method) {
        try {
            Class<?> factory =
                    Class.forName("org.slf4j.LoggerFactory", true, owner.getClassLoader());
            Object logger = factory.getMethod("getLogger", String.class).invoke(null, owner.getName());
            Class<?> loggerType = Class.forName("org.slf4j.Logger", true, owner.getClassLoader());
            return new PluginLog(
                    logger,
                    loggerType.getMethod("info", String.class),
                    loggerType.getMethod("warn", String.class),
                    Logger.getLogger(owner.getName()),
                    owner.getName(),
                    method);
        } catch (ReflectiveOperationException | LinkageError e) {
            return new PluginLog(null, null, null, Logger.getLogger(owner.getName()), owner.getName(), method);
        }
    }

    void info(String msg) {
        log(info, Level.INFO, msg);
    }

    void warn(String msg) {
        log(warn, Level.WARNING, msg);
    }

    private void log(Method m, Level level, String msg) {
        if (slf4j != null) {
            try {
                m.invoke(slf4j, msg);
                return;
            } catch (ReflectiveOperationException | RuntimeException e) {
                // fall through to java.util.logging rather than lose the line
            }
        }
        jul.logp(level, name, method, msg);
    }
}
