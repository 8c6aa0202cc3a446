package com.github.flinkpreflight.validator;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;

/** Fixtures for the validator's tests (runner, assertions and fakes: ../testing). */
final class TestSupport {

    private TestSupport() {}

    // ---------------------------------------------------------------------------------------
    // Fixtures: the operator-shaped resources of internal/admission/testdata.

    static String fixture(String repoRoot, String name) throws IOException {
        Path p = Paths.get(repoRoot, "internal", "admission", "testdata", name);
        return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
    }

    /** The fixture with spec.flinkConfiguration["rest.port"] set, as a user sets the JobManager's port. */
    @SuppressWarnings("unchecked")
    static String withRestPort(String json, int port) throws Json.ParseException {
        Map<String, Object> doc = (Map<String, Object>) Json.parse(json);
        Map<String, Object> spec = (Map<String, Object>) doc.get("spec");
        Map<String, Object> conf = (Map<String, Object>) spec.computeIfAbsent("flinkConfiguration", k -> new LinkedHashMap<>());
        conf.put("rest.port", Integer.toString(port));
        return Json.write(doc);
    }

    /** Operator configuration with the validator's keys (without their prefix). */
    static Map<String, String> conf(String... keyValues) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("kubernetes.operator.reconcile.interval", "60 s"); // the operator's own keys are there too
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(ValidatorConfig.PREFIX + keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    /**
     * A class loader as Flink's plugin loader builds it (ComponentClassLoader): the jar's own
     * classes, {@code java.} from the platform, and only {@code org.apache.flink.} from the host
     * (the default parent-first patterns of the released operators; no com.fasterxml, no
     * io.fabric8).
     */
    static URLClassLoader pluginLoader(Path jar) throws IOException {
        ClassLoader host = TestSupport.class.getClassLoader();
        return new URLClassLoader(new URL[] {jar.toUri().toURL()}, ClassLoader.getPlatformClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.startsWith("org.apache.flink.")) {
                    return host.loadClass(name);
                }
                return super.loadClass(name, resolve);
            }
        };
    }
}
