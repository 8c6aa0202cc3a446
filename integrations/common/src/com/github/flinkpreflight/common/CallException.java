package com.github.flinkpreflight.common;

/** No usable answer from preflightd: transport error, timeout, HTTP error or an unreadable answer. */
final class CallException extends Exception {
    private static final long serialVersionUID = 1L;

    CallException(String message) {
        super(message);
    }

    CallException(String message, Throwable cause) {
        super(message, cause);
    }
}
