package dev.onceonly.http;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.internal.deadletter.DeadLetterChannels;
import dev.onceonly.testing.InMemoryDeadLetters;
import jakarta.json.JsonObject;
import jakarta.ws.rs.core.SecurityContext;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Clock;
import java.time.Instant;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The resource an application mounts refuses every caller but an authenticated one in its role
 * (the refusals as HTTP statuses are shown on a server by DeadLetterReplayIT: this JVM has no
 * Jakarta REST runtime to build responses), and shows dead letters without their bodies but on the
 * body's own call.
 */
class DeadLetterResourceTest {

    static final byte[] BODY = "{\"orderId\":\"secret\"}".getBytes(StandardCharsets.UTF_8);

    /** One dead letter in one queue, in memory; removing it takes it away. */
    final InMemoryDeadLetters access = new InMemoryDeadLetters().add(new DeadLetter("dl-1", "orders", "FAILED", "boom", 1,
            "inventory", Instant.EPOCH, "k1", "ab".repeat(32), BODY.length, 0, "orders-x", "order.placed", true), BODY);
    final List<InMemoryDeadLetters.Entry> queue = access.queue;

    private DeadLetterResource resource() {
        DeadLetterResource r = new DeadLetterResource() {
            @Override
            protected String role() {
                return "operator";
            }
        };
        r.queues = new DeadLetterChannels(() -> List.of(access), Clock.systemUTC());
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

        assertEquals(1, r.discardAll(security, "orders", "application/json", "{\"outcome\":\"FAILED\",\"dryRun\":true}")
                .getJsonArray("letters").size());
        assertEquals(1, queue.size(), "a dry run removes nothing");
        assertEquals("dl-1", r.discard(security, "orders", "dl-1").getString("id"));
        assertEquals(0, queue.size());
    }

    /**
     * A cross-site form can send a POST with query parameters and a form or text body, but not a
     * JSON one without a CORS preflight: every state-changing call takes its parameters from a JSON
     * body only, and nothing from the query.
     */
    @Test
    void everyStateChangingCallTakesAJsonBodyAndNothingFromTheQuery() {
        int posts = 0;
        for (java.lang.reflect.Method m : DeadLetterResource.class.getDeclaredMethods()) {
            if (!m.isAnnotationPresent(jakarta.ws.rs.POST.class)) {
                continue;
            }
            posts++;
            jakarta.ws.rs.Consumes consumes = m.getAnnotation(jakarta.ws.rs.Consumes.class);
            assertEquals(List.of("application/json"), consumes == null ? List.of() : List.of(consumes.value()), m.getName() + " consumes");
            for (java.lang.annotation.Annotation[] p : m.getParameterAnnotations()) {
                for (java.lang.annotation.Annotation a : p) {
                    assertFalse(a instanceof jakarta.ws.rs.QueryParam || a instanceof jakarta.ws.rs.FormParam,
                            m.getName() + " takes " + a + " from the request, not from its JSON body");
                }
            }
        }
        assertEquals(3, posts, "replay one, replay all, discard all");
    }

    /** A dry run is a listing: paged like one, with how many match, never the whole queue at once. */
    @Test
    void aDryRunIsPagedLikeAList() {
        for (int i = 2; i <= 60; i++) {
            queue.add(queue.get(0));
        }
        DeadLetterResource r = resource();
        SecurityContext security = caller("ops", Set.of("operator"));

        JsonObject dry = r.discardAll(security, "orders", "application/json", "{\"dryRun\":true}");

        assertEquals(50, dry.getJsonArray("letters").size(), "the default page: " + dry.getJsonArray("letters").size() + " letters");
        assertEquals(60, dry.getInt("matching"));
        JsonObject last = r.replayAll(security, "orders", "application/json; charset=UTF-8", "{\"dryRun\":true,\"offset\":55,\"limit\":10}");
        assertEquals(5, last.getJsonArray("letters").size());
        assertEquals(60, queue.size(), "a dry run removes nothing");
    }

    /** What a cross-site form can send is refused before anything is read: 415, whatever the body says. */
    /**
     * An operator who looked at an unverified dead letter replays it over HTTP as from the command
     * line ({@code "unverified": true}); a verified one is never sent that way, nor an unverified one
     * without asking (the route was missing: the field was refused as unknown).
     */
    @Test
    void anUnverifiedReplayIsAskedForInTheBody() {
        DeadLetterResource r = resource();
        SecurityContext security = caller("ops", Set.of("operator"));

        JsonObject asked = r.replay(security, "orders", "dl-1", "application/json", "{\"unverified\":true,\"wait\":\"0\"}");

        assertEquals("NOT_REPLAYABLE", asked.getString("status"), asked.toString());
        assertTrue(asked.getString("detail").contains("verified: replay it as the original"), asked.toString());
        DeadLetterRequest.Refused wrongType = assertThrows(DeadLetterRequest.Refused.class,
                () -> DeadLetterRequest.parse("application/json", "{\"unverified\":\"yes\"}", DeadLetterRequest.REPLAY_ONE));
        assertEquals(400, wrongType.status());
        assertThrows(DeadLetterRequest.Refused.class,
                () -> DeadLetterRequest.parse("application/json", "{\"unverified\":true}", DeadLetterRequest.REPLAY_ALL),
                "never with a replay of all");
        assertEquals(1, queue.size(), "nothing sent");
    }

    @Test
    void aBodyThatIsNotJsonIsRefusedWith415() {
        for (String type : new String[] {"application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain", null}) {
            DeadLetterRequest.Refused refused = assertThrows(DeadLetterRequest.Refused.class,
                    () -> DeadLetterRequest.parse(type, "{\"dryRun\":true}", DeadLetterRequest.DISCARD_ALL));
            assertEquals(415, refused.status(), String.valueOf(type));
            assertTrue(refused.getMessage().contains("application/json"), refused.getMessage());
        }
    }

    /** A JSON body that is not a valid request is refused naming the field, never half-read: a typo must not discard for real. */
    @Test
    void anInvalidJsonRequestIsRefusedWith400NamingTheField() {
        Map<String, String> refusals = new LinkedHashMap<>();
        refusals.put("", "JSON object");
        refusals.put("[1]", "JSON object");
        refusals.put("{\"dryrun\":true}", "unknown field dryrun");
        refusals.put("{\"dryRun\":\"true\"}", "dryRun: true or false");
        refusals.put("{\"limit\":10}", "dry run only");
        refusals.put("{\"dryRun\":true,\"limit\":501}", "limit");
        refusals.put("{\"dryRun\":true,\"offset\":-1}", "offset");
        refusals.put("{\"olderThan\":\"soon\"}", "olderThan");
        refusals.put("{\"wait\":\"2m\"}", "wait: at most 1m");
        refusals.put("{\"wait\":5}", "wait: a string");
        for (Map.Entry<String, String> r : refusals.entrySet()) {
            DeadLetterRequest.Refused refused = assertThrows(DeadLetterRequest.Refused.class,
                    () -> DeadLetterRequest.parse("application/json", r.getKey(), DeadLetterRequest.REPLAY_ALL), r.getKey());
            assertEquals(400, refused.status(), r.getKey());
            assertTrue(refused.getMessage().contains(r.getValue()), r.getKey() + ": " + refused.getMessage());
        }
        assertEquals(400, assertThrows(DeadLetterRequest.Refused.class,
                () -> DeadLetterRequest.parse("application/json", "{\"wait\":\"1s\"}", DeadLetterRequest.DISCARD_ALL)).status(),
                "a discard does not wait");
        assertEquals(Duration.ofMinutes(1), DeadLetterRequest.parse("application/json", "{\"wait\":\"60s\"}", DeadLetterRequest.REPLAY_ONE).waitFor());
        assertEquals(Duration.ZERO, DeadLetterRequest.parse("application/json", "{\"wait\":\"0\"}", DeadLetterRequest.REPLAY_ONE).waitFor());
        assertEquals(400, assertThrows(DeadLetterRequest.Refused.class, () -> DeadLetterRequest.checkPage(0, 501)).status(),
                "a listing is bounded like a dry run");
    }
}
