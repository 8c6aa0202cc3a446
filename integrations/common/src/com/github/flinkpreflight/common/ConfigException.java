package com.github.flinkpreflight.common;

/** A missing or malformed option; the message names the key. */
final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;

    ConfigException(String message) {
        super(message);
    }
}
