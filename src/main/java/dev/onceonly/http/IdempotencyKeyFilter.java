package dev.onceonly.http;

import dev.onceonly.api.IdempotencyContext;
import dev.onceonly.internal.support.CurrentKey;
import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;

/**
 * Sends the running guarded handler's key as {@link IdempotencyContext#HEADER} on Jakarta REST
 * client and MicroProfile Rest Client calls ({@code @RegisterProvider(IdempotencyKeyFilter.class)}).
 * Calls made outside a guarded handler are left unchanged; a header the caller set itself wins.
 */
public class IdempotencyKeyFilter implements ClientRequestFilter {

    @Override
    public void filter(ClientRequestContext request) {
        String key = CurrentKey.get();
        if (key != null && !request.getHeaders().containsKey(IdempotencyContext.HEADER)) {
            request.getHeaders().putSingle(IdempotencyContext.HEADER, key);
        }
    }
}
