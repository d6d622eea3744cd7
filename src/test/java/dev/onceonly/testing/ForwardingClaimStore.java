package dev.onceonly.testing;

import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.HolderResult;

import java.time.Duration;
import java.util.Optional;

/** A claim store that passes every call to another: tests override the calls they watch or change. */
public abstract class ForwardingClaimStore implements ClaimStore {

    protected final ClaimStore store;

    protected ForwardingClaimStore(ClaimStore store) {
        this.store = store;
    }

    @Override
    public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        return store.claim(key, token, fingerprint, lease);
    }

    @Override
    public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
        return store.complete(key, token, fingerprint, retention);
    }

    @Override
    public HolderResult release(String key, String token) {
        return store.release(key, token);
    }

    @Override
    public HolderResult extend(String key, String token, Duration lease) {
        return store.extend(key, token, lease);
    }

    @Override
    public String name() {
        return store.name();
    }

    @Override
    public Optional<String> problem() {
        return store.problem();
    }

    @Override
    public void close() {
        store.close();
    }
}
