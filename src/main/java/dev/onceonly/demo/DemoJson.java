package dev.onceonly.demo;

import jakarta.json.spi.JsonProvider;

/**
 * The demo's one JSON-P provider. {@code jakarta.json.Json}'s static factories look the provider up
 * again on every call (on Open Liberty a failed OSGi class probe and a service-loader scan each
 * time); the demo builds and parses JSON for every message and request, so it looks it up once.
 */
public final class DemoJson {

    /** Thread-safe: providers and the factories they make may be shared. */
    public static final JsonProvider JSON = JsonProvider.provider();

    private DemoJson() {
    }
}
