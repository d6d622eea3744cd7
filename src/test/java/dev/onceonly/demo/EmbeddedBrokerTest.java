package dev.onceonly.demo;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.onceonly.demo.broker.EmbeddedBroker;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The demo's embedded broker really speaks AMQP 0-9-1 to amqp-client, and fails loudly when it cannot listen. */
class EmbeddedBrokerTest {

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void publishesAndDeliversWithConfirmsOnATopicExchange() throws Exception {
        int port = freePort();
        try (EmbeddedBroker broker = EmbeddedBroker.start(port, "guest", "guest")) {
            ConnectionFactory f = new ConnectionFactory();
            f.setPort(port);
            try (Connection c = f.newConnection(); Channel ch = c.createChannel()) {
                ch.exchangeDeclare("orders", "topic", true);
                ch.queueDeclare("inventory", true, false, false, null);
                ch.queueBind("inventory", "orders", "order.*");
                ch.confirmSelect();
                ch.basicPublish("orders", "order.placed", null, "{\"orderId\":\"o1\"}".getBytes(StandardCharsets.UTF_8));
                ch.waitForConfirmsOrDie(5000);
                GetResponse r = ch.basicGet("inventory", false);
                assertNotNull(r);
                assertEquals("order.placed", r.getEnvelope().getRoutingKey());
                assertEquals("{\"orderId\":\"o1\"}", new String(r.getBody(), StandardCharsets.UTF_8));
                ch.basicAck(r.getEnvelope().getDeliveryTag(), false);
            }
        }
    }

    @Test
    void portInUseIsAStartupFailureNotASilentBroker() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> EmbeddedBroker.start(taken.getLocalPort(), "guest", "guest"));
            assertTrue(e.getMessage().contains(Integer.toString(taken.getLocalPort())), e.getMessage());
        }
    }
}
