package org.apache.flink.configuration;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Compile-only mirror of Flink's {@code Configuration} (flink-core), reduced to string key/value
 * access. The adapter reads its options through {@link #toMap()}, which every Flink version since
 * 1.x has, so it needs no {@code ConfigOption} classes.
 */
public class Configuration implements java.io.Serializable {

    private static final long serialVersionUID = 1L;

    protected final HashMap<String, Object> confData;

    public Configuration() {
        this.confData = new HashMap<>();
    }

    public Configuration(Configuration other) {
        this.confData = new HashMap<>(other.confData);
    }

    public static Configuration fromMap(Map<String, String> map) {
        Configuration configuration = new Configuration();
        map.forEach(configuration::setString);
        return configuration;
    }

    public void setString(String key, String value) {
        if (key == null || value == null) {
            throw new NullPointerException("key and value must not be null");
        }
        synchronized (confData) {
            confData.put(key, value);
        }
    }

    public String getString(String key, String defaultValue) {
        synchronized (confData) {
            Object v = confData.get(key);
            return v == null ? defaultValue : v.toString();
        }
    }

    public Set<String> keySet() {
        synchronized (confData) {
            return new HashSet<>(confData.keySet());
        }
    }

    public boolean containsKey(String key) {
        synchronized (confData) {
            return confData.containsKey(key);
        }
    }

    public void addAll(Configuration other) {
        synchronized (confData) {
            synchronized (other.confData) {
                confData.putAll(other.confData);
            }
        }
    }

    public Map<String, String> toMap() {
        synchronized (confData) {
            Map<String, String> ret = new HashMap<>(confData.size());
            confData.forEach((k, v) -> ret.put(k, v.toString()));
            return ret;
        }
    }

    @Override
    public String toString() {
        return toMap().toString();
    }
}
