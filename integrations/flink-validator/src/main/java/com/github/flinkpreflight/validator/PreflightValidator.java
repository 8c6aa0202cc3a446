package com.github.flinkpreflight.validator;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The validator, shared by the two plugin classes (one per package the operator's
 * {@code FlinkResourceValidator} has lived in): serialize the resource with the operator's own
 * mapper, ask preflightd's plain admission route, and map the answer to the operator's
 * convention, an empty {@code Optional} to allow and a message to deny. It never throws: the
 * operator runs every validator in its webhook and in each reconcile, and an exception would fail
 * both for every resource, so anything unexpected (a {@code LinkageError} from another operator
 * version included) is handled by {@code on-failure}.
 *
 * <p>A resource whose spec equals its {@code status.reconciliationStatus.lastReconciledSpec}
 * changes nothing (the reconcile loop validates every resource on every pass): it is allowed
 * without a call, as preflightd would allow it.
 */
final class PreflightValidator {

    private static final PluginLog LOG = PluginLog.forClass(PreflightValidator.class, "validate");

    private final ResourceJson mapper = new ResourceJson();
    private final AdmissionClient client = new AdmissionClient();
    private volatile ValidatorConfig config;
    private volatile String configError = "not configured: the operator did not call configure()";
    private volatile boolean failClosed = ValidatorConfig.failClosedOf(Map.of());

    /** Reads the options from the operator's configuration; never throws. */
    void configure(Supplier<Map<String, String>> operatorConf) {
        Map<String, String> conf;
        try {
            conf = operatorConf.get();
            if (conf == null) {
                conf = Map.of();
            }
        } catch (RuntimeException | LinkageError e) {
            config = null;
            configError = "cannot read the operator's configuration: " + e;
            LOG.warn("Preflight validator: " + configError);
            return;
        }
        failClosed = ValidatorConfig.failClosedOf(conf);
        try {
            ValidatorConfig c = ValidatorConfig.parse(conf);
            config = c;
            configError = null;
            LOG.info("Preflight validator: preflightd at " + c.serviceUrl + ", on-failure "
                    + (c.failClosed ? "fail-closed" : "fail-open") + ", request timeout "
                    + c.requestTimeout.toMillis() + " ms" + (c.dryRun ? ", dry run" : ""));
        } catch (ConfigException e) {
            config = null;
            configError = e.getMessage();
            LOG.warn("Preflight validator: bad configuration, every change follows on-failure ("
                    + (failClosed ? "fail-closed" : "fail-open") + "): " + e.getMessage());
        }
    }

    /** The operator's answer for one FlinkDeployment or FlinkSessionJob. */
    Optional<String> validate(Object resource) {
        String what = resource == null ? "a null resource" : resource.getClass().getSimpleName();
        try {
            ValidatorConfig cfg = config;
            if (cfg == null) {
                return failure(failClosed, false, what, configError);
            }
            String json;
            try {
                json = mapper.write(Objects.requireNonNull(resource, "resource"));
            } catch (ResourceJson.SerializationException e) {
                return failure(cfg.failClosed, cfg.dryRun, what, e.getMessage());
            }
            Map<?, ?> doc;
            try {
                doc = asMap(Json.parse(json));
            } catch (Json.ParseException e) {
                return failure(cfg.failClosed, cfg.dryRun, what, "the operator's mapper wrote " + e.getMessage());
            }
            what = describe(doc, what);
            if (unchangedSpec(doc)) {
                return Optional.empty();
            }
            String id = "validator-" + UUID.randomUUID();
            AdmissionClient.Answer a;
            try {
                a = client.admit(cfg, json, id);
            } catch (CallException e) {
                return failure(cfg.failClosed, cfg.dryRun, what, e.getMessage() + " [request " + id + "]");
            }
            return verdict(cfg, a, what, id);
        } catch (Throwable t) { // never fail the operator's webhook or reconcile: see the class comment
            if (t instanceof VirtualMachineError) {
                throw (VirtualMachineError) t;
            }
            return failure(failClosed, false, what, "unexpected " + t);
        }
    }

    private static Optional<String> verdict(ValidatorConfig cfg, AdmissionClient.Answer a, String what, String id) {
        boolean said = false; // preflightd's fail-open warning repeats its message
        for (String w : a.warnings) {
            LOG.warn(w + " [" + what + ", request " + id + "]");
            said |= !a.message.isEmpty() && w.startsWith(a.message);
        }
        if (a.allowed) {
            if (!said) {
                LOG.info(a.message + " [request " + id + "]");
            }
            return Optional.empty();
        }
        if (cfg.dryRun) {
            LOG.warn("dry run, allowed anyway: " + a.message + " [request " + id + "]");
            return Optional.empty();
        }
        LOG.warn(a.message + " [request " + id + "]");
        return Optional.of(a.message);
    }

    /** A change that could not be checked, under the failure policy. */
    private static Optional<String> failure(boolean closed, boolean dryRun, String what, String cause) {
        String msg = "Preflight could not check the parallelism change of " + what + ": " + cause;
        if (closed && !dryRun) {
            String denial = msg + ". Denied: " + ValidatorConfig.PREFIX + ValidatorConfig.ON_FAILURE + " is fail-closed.";
            LOG.warn(denial);
            return Optional.of(denial);
        }
        LOG.warn(msg + ". Allowed: " + (dryRun ? "dry run." : ValidatorConfig.PREFIX + ValidatorConfig.ON_FAILURE + " is fail-open."));
        return Optional.empty();
    }

    private static Map<?, ?> asMap(Object o) {
        return o instanceof Map ? (Map<?, ?>) o : Map.of();
    }

    /** "FlinkDeployment flink/compact-sink", as preflightd and kubectl name it. */
    static String describe(Map<?, ?> doc, String dflt) {
        Map<?, ?> meta = asMap(doc.get("metadata"));
        Object kind = doc.get("kind");
        Object ns = meta.get("namespace");
        Object name = meta.get("name");
        if (!(kind instanceof String) || !(name instanceof String)) {
            return dflt;
        }
        return kind + " " + (ns instanceof String ? ns + "/" : "") + name;
    }

    /**
     * Whether the spec is the last reconciled one ({"spec": …, "resource_metadata": …} as the
     * operator's SpecUtils writes it, or the bare spec of old operators): then no parallelism
     * changes.
     */
    static boolean unchangedSpec(Map<?, ?> doc) {
        Object last = asMap(asMap(doc.get("status")).get("reconciliationStatus")).get("lastReconciledSpec");
        Object spec = doc.get("spec");
        if (!(last instanceof String) || spec == null) {
            return false;
        }
        try {
            Map<?, ?> wrapper = asMap(Json.parse((String) last));
            Object lastSpec = wrapper.containsKey("spec") ? wrapper.get("spec") : wrapper;
            return spec.equals(lastSpec);
        } catch (Json.ParseException e) {
            return false; // preflightd reads it and names the problem
        }
    }
}
