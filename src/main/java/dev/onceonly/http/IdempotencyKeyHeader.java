package dev.onceonly.http;

import dev.onceonly.api.IdempotencyContext;
import dev.onceonly.internal.support.CurrentKey;

import java.net.http.HttpRequest;

/** Adds the running guarded handler's key and fence to a JDK {@code HttpClient} request. */
public final class IdempotencyKeyHeader {

    private IdempotencyKeyHeader() {
    }

    /**
     * Sets {@link IdempotencyContext#HEADER} on {@code request} when called inside a guarded
     * handler, and {@link IdempotencyContext#FENCE_HEADER} when its claim has a fence; leaves it
     * unchanged outside one.
     *
     * @param request the request being built
     * @return {@code request}
     */
    public static HttpRequest.Builder apply(HttpRequest.Builder request) {
        String key = CurrentKey.get();
        if (key != null) {
            request.setHeader(IdempotencyContext.HEADER, key);
            long fence = CurrentKey.fence();
            if (fence > 0) {
                request.setHeader(IdempotencyContext.FENCE_HEADER, Long.toString(fence));
            }
        }
        return request;
    }
}
