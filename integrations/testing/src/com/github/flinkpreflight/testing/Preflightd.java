package com.github.flinkpreflight.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * preflightd on loopback ports chosen by the kernel, for the integrations' end-to-end tests (the
 * autoscaler adapter and the operator validator): started from a built binary, its HTTP address
 * read from its first lines, its log kept.
 */
public final class Preflightd implements AutoCloseable {
    final Process process;
    /** The HTTP listener, http://127.0.0.1:PORT. */
    public final String url;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private Preflightd(Process process, String url) {
        this.process = process;
        this.url = url;
    }

    /** Starts binary on loopback with flags (e.g. --allow) added. */
    public static Preflightd start(String binary, String... flags) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(binary, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"));
        cmd.addAll(List.of(flags));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        List<String> seen = new CopyOnWriteArrayList<>();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String httpAddr = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String line;
        while (httpAddr == null && (line = out.readLine()) != null) {
            seen.add(line);
            if (line.startsWith("http-addr=")) {
                httpAddr = line.substring("http-addr=".length()).trim();
            }
            if (System.nanoTime() > deadline) {
                break;
            }
        }
        if (httpAddr == null) {
            p.destroyForcibly();
            throw new IllegalStateException("preflightd did not print its HTTP address:\n" + String.join("\n", seen));
        }
        Preflightd d = new Preflightd(p, "http://" + httpAddr);
        d.lines.addAll(seen);
        Thread drain = new Thread(() -> {
            try {
                String l;
                while ((l = out.readLine()) != null) {
                    d.lines.add(l);
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }, "preflightd-log");
        drain.setDaemon(true);
        drain.start();
        return d;
    }

    /** Everything the daemon printed so far. */
    public String log() {
        return String.join("\n", lines);
    }

    @Override
    public void close() {
        process.destroy(); // SIGTERM: drain and stop
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
