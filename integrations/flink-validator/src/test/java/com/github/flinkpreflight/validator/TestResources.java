package com.github.flinkpreflight.validator;

import org.apache.flink.kubernetes.operator.api.FlinkDeployment;
import org.apache.flink.kubernetes.operator.api.FlinkSessionJob;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;

/** Resource objects with the JSON the test ObjectMapper writes for them. */
public final class TestResources {

    private static final Map<Object, String> JSON = Collections.synchronizedMap(new IdentityHashMap<>());

    private TestResources() {}

    /** The JSON attached to a resource; null for one without (the mapper then fails). */
    public static String jsonOf(Object resource) {
        return JSON.get(resource);
    }

    static FlinkDeployment deployment(String json) {
        FlinkDeployment d = new FlinkDeployment();
        JSON.put(d, json);
        return d;
    }

    static FlinkSessionJob sessionJob(String json) {
        FlinkSessionJob j = new FlinkSessionJob();
        JSON.put(j, json);
        return j;
    }
}
