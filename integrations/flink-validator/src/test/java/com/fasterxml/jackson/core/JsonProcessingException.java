package com.fasterxml.jackson.core;

/** Test-only stand-in for Jackson's checked exception (the operator's classes are not here). */
public class JsonProcessingException extends java.io.IOException {
    private static final long serialVersionUID = 1L;

    public JsonProcessingException(String msg) {
        super(msg);
    }
}
