package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Channel;
import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.Outcome;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.TestRabbit;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A dead-letter exchange that refuses the dead letter (deleted, or routing to no queue) on a classic
 * queue: the decision to dead-letter stands, so the connector holds the message and publishes the
 * dead letter again after the retry delay until the broker takes it; it never hands the message to
 * the handler again (issue 46: it was requeued, and the handler ran again at its last attempt every
 * retry delay for as long as the exchange was broken).
 */
class BrokenDeadLetterExchangeTest extends DeadLetterFixture {

    @Test
    void aRefusedDeadLetterIsPublishedAgainAndTheHandlerNeverRunsAgain() throws Exception {
        try (Channel admin = operationsConnection.createChannel(); LogCapture log = new LogCapture()) {
            admin.exchangeDelete(settings.deadLetterExchange());
            rabbit.publish("", queue, "broken");
            settle(probe.next(), Outcome.FAILED, "db");
            // Until the dead letter was refused three times, or the message came back to the handler.
            await("the dead letter refused a few times", LIMIT,
                    () -> log.lines("ONCE0506W").size() + 100 * probe.received.size(), n -> n >= 3);

            Message<?> again = probe.received.poll(500, TimeUnit.MILLISECONDS);
            assertNull(again, "the message came back to the handler: " + log.lines());
            assertEquals(0, TestRabbit.total(dlq));

            admin.exchangeDeclare(settings.deadLetterExchange(), settings.deadLetterExchangeType(), true);
            admin.queueBind(dlq, settings.deadLetterExchange(), settings.deadLetterRoutingKey());
            await("the dead letter, once the exchange is back", LIMIT, () -> TestRabbit.total(dlq), n -> n == 1);
        }
        List<DeadLetter> letters = all();
        assertEquals(1, letters.size(), letters.toString());
        assertEquals("FAILED", letters.get(0).outcome());
        assertNull(probe.received.poll(300, TimeUnit.MILLISECONDS), "nothing else delivered");
        await("the work queue empty", Duration.ofSeconds(10), () -> TestRabbit.total(queue), n -> n == 0);
    }
}
