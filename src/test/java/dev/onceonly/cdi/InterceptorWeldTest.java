package dev.onceonly.cdi;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The interceptor guarding a real CDI bean in Weld, configured through MicroProfile Config (SmallRye Config). */
@EnableWeld
class InterceptorWeldTest {

    @BeforeAll
    static void configure() {
        System.setProperty("onceonly.store", "memory");
    }

    @AfterAll
    static void unconfigure() {
        System.clearProperty("onceonly.store");
    }

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(WeldInitiator.createWeld()
                    .addBeanClasses(GuardedBean.class, IdempotentMessageInterceptor.class, OnceOnlyRuntime.class, Outcomes.class)
                    .addExtension(new OnceOnlyExtension()))
            .activate(ApplicationScoped.class)
            .build();

    @Inject
    GuardedBean bean;

    @Inject
    Outcomes outcomes;

    @ApplicationScoped
    static class Outcomes {
        private final List<Outcome> seen = new CopyOnWriteArrayList<>();

        void on(@Observes GuardEvent e) {
            seen.add(e.outcome());
        }

        List<Outcome> seen() {
            return List.copyOf(seen);
        }
    }

    private static MessageView message(String body) {
        return MessageView.of("orders", "order.placed", null, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void secondCallWithTheSameMessageIsNotExecuted() {
        MessageView m = message(UUID.randomUUID().toString());
        assertEquals("run-1", bean.onMessage(m));
        assertNull(bean.onMessage(m));
        assertEquals(1, bean.runs());
        assertEquals(List.of(Outcome.PROCESSED, Outcome.DUPLICATE), outcomes.seen());
    }

    @Test
    void throwingCallReleasesTheClaimSoARetryRuns() {
        MessageView m = message(UUID.randomUUID().toString());
        bean.failNextCalls(true);
        assertThrows(IllegalStateException.class, () -> bean.onMessage(m));
        bean.failNextCalls(false);
        assertEquals("run-1", bean.onMessage(m));
        assertEquals(List.of(Outcome.FAILED, Outcome.PROCESSED), outcomes.seen());
    }

    @Test
    void payloadOnlyMethodIsGuardedByItsIdempotencyKeyParameter() {
        String id = UUID.randomUUID().toString();
        assertEquals(1, bean.onPayload("{\"qty\":1}", id));
        assertEquals(0, bean.onPayload("{\"qty\":1}", id), "a skipped call of an int method returns 0");
        assertEquals(2, bean.onPayload("{\"qty\":1}", id + "-other"));
    }
}
