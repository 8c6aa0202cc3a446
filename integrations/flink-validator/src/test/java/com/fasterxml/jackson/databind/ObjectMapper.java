package com.fasterxml.jackson.databind;

import com.fasterxml.jackson.core.JsonProcessingException;

import com.github.flinkpreflight.validator.TestResources;

/**
 * Test-only stand-in for the operator's Jackson ObjectMapper, with the two members the plugin
 * calls reflectively (checked against the real ones by build.sh, spi-stubs/real-api.txt): it
 * writes the JSON a test attached to the resource object, as the real mapper would write the
 * real resource.
 */
public class ObjectMapper {

    public ObjectMapper() {}

    public String writeValueAsString(Object value) throws JsonProcessingException {
        String json = TestResources.jsonOf(value);
        if (json == null) {
            throw new JsonProcessingException("no serializer for " + value.getClass().getName());
        }
        return json;
    }
}
