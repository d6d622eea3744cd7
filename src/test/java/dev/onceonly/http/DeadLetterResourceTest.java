package dev.onceonly.http;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.internal.deadletter.DeadLetterAccess;
import dev.onceonly.internal.deadletter.DeadLetterChannels;
import dev.onceonly.internal.deadletter.ReplayWatch;
import jakarta.json.JsonObject;
import jakarta.ws.rs.core.SecurityContext;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The resource an application mounts refuses every caller but an authenticated one in its role
 * (the refusals as HTTP statuses are shown on a server by DeadLetterReplayIT: this JVM has no
 * Jakarta REST runtime to build responses), and shows dead letters without their bodies but on the
 * body's own call.
 */
class DeadLetterResourceTest {

    static final byte[] BODY = "{\"orderId\":\"secret\"}".getBytes(StandardCharsets.UTF_8);

    /** One dead letter in one queue, in memory; removing it takes it away. */
    final List<DeadLetterAccess.Held> queue = new ArrayList<>(List.of(new DeadLetterAccess.Held() {
        @Override
        public DeadLetter letter() {
            return new DeadLetter("dl-1", "orders", "FAILED", "boom", 1, "inventory", Instant.EPOCH, "k1", "ab".repeat(32), BODY.length,
                    0, "orders-x", "order.placed", true);
        }

        @Override
        public byte[] body() {
            return BODY;
        }
    }));

    final DeadLetterAccess access = new DeadLetterAccess() {
        @Override
        public String channel() {
            return "orders";
        }

        @Override
        public String queue() {
            return "orders.dlq";
        }

        @Override
        public int count() {
            return queue.size();
        }

        @Override
        public Scan scan() {
            List<Held> snapshot = new ArrayList<>(queue);
            return new Scan() {
                int next;

                @Override
                public Held next() {
                    return next < snapshot.size() ? snapshot.get(next++) : null;
                }

                @Override
                public void republish(Held held) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public void remove(Held held) {
                    queue.remove(held);
                }

                @Override
                public void close() {
                }
            };
        }

        @Override
        public Scan scanAlone() {
            return scan();
        }
    };

    private DeadLetterResource resource() {
        DeadLetterResource r = new DeadLetterResource() {
            @Override
            protected String role() {
                return "operator";
            }
        };
        r.queues = new DeadLetterChannels(() -> List.of(access), new ReplayWatch(), Clock.systemUTC());
        return r;
    }

    /** A caller as the server authenticated it: {@code user} ({@code null}: nobody) in {@code roles}. */
    private static SecurityContext caller(String user, Set<String> roles) {
        return new SecurityContext() {
            @Override
            public Principal getUserPrincipal() {
                return user == null ? null : () -> user;
            }

            @Override
            public boolean isUserInRole(String role) {
                return roles.contains(role);
            }

            @Override
            public boolean isSecure() {
                return true;
            }

            @Override
            public String getAuthenticationScheme() {
                return BASIC_AUTH;
            }
        };
    }

    @Test
    void refusesAnUnauthenticatedCallerAndOneWithoutTheRole() {
        assertEquals(401, DeadLetterResource.refusal(null, "operator"));
        assertEquals(401, DeadLetterResource.refusal(caller(null, Set.of("operator")), "operator"));
        assertEquals(403, DeadLetterResource.refusal(caller("eve", Set.of("user")), "operator"));
        assertEquals(403, DeadLetterResource.refusal(caller("eve", Set.of("")), ""), "no role configured: nobody");
        assertEquals(0, DeadLetterResource.refusal(caller("ops", Set.of("operator")), "operator"));
    }

    @Test
    void anOperatorSeesDeadLettersWithoutTheirBodiesButOnTheBodysOwnCall() {
        DeadLetterResource r = resource();
        SecurityContext security = caller("ops", Set.of("operator"));

        JsonObject page = r.list(security, "orders", "failed", "BOO", "inventory", null, 0, 50);

        assertEquals(1, page.getInt("matching"));
        JsonObject letter = page.getJsonArray("letters").getJsonObject(0);
        assertEquals("dl-1", letter.getString("id"));
        assertEquals("k1", letter.getString("keyDigest"));
        assertFalse(page.toString().contains("secret"), "never the body: " + page);
        assertArrayEquals(BODY, r.body(security, "orders", "dl-1"));
        assertEquals(1, r.list(security, "orders", null, null, null, "1h", 0, 50).getInt("matching"), "dead-lettered long ago");

        assertEquals(1, r.discardAll(security, "orders", "FAILED", null, null, null, true).getJsonArray("letters").size());
        assertEquals(1, queue.size(), "a dry run removes nothing");
        assertEquals("dl-1", r.discard(security, "orders", "dl-1").getString("id"));
        assertEquals(0, queue.size());
    }
}
