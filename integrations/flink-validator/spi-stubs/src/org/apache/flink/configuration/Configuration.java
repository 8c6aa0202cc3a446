package org.apache.flink.configuration;

import java.util.HashMap;
import java.util.Map;

/** Compile-time mirror of Flink's {@code Configuration}: only what the plugin and its tests use. */
public class Configuration {

    private final Map<String, String> values = new HashMap<>();

    public Configuration() {}

    public static Configuration fromMap(Map<String, String> map) {
        Configuration c = new Configuration();
        c.values.putAll(map);
        return c;
    }

    public Map<String, String> toMap() {
        return new HashMap<>(values);
    }
}
