package dev.onceonly.http;

import dev.onceonly.api.IdempotencyContext;
import dev.onceonly.internal.support.CurrentKey;
import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;

/**
 * Sends the running guarded handler's key as {@link IdempotencyContext#HEADER}, and its claim's
 * fence as {@link IdempotencyContext#FENCE_HEADER} when it has one, on Jakarta REST client and
 * MicroProfile Rest Client calls ({@code @RegisterProvider(IdempotencyKeyFilter.class)}). Calls
 * made outside a guarded handler are left unchanged; a header the caller set itself wins.
 */
public class IdempotencyKeyFilter implements ClientRequestFilter {

    @Override
    public void filter(ClientRequestContext request) {
        String key = CurrentKey.get();
        if (key == null) {
            return;
        }
        if (!request.getHeaders().containsKey(IdempotencyContext.HEADER)) {
            request.getHeaders().putSingle(IdempotencyContext.HEADER, key);
        }
        long fence = CurrentKey.fence();
        if (fence > 0 && !request.getHeaders().containsKey(IdempotencyContext.FENCE_HEADER)) {
            request.getHeaders().putSingle(IdempotencyContext.FENCE_HEADER, Long.toString(fence));
        }
    }
}
