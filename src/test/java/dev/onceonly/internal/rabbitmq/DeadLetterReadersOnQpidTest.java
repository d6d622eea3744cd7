package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.demo.broker.EmbeddedBroker;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dead-letter reads' registration on the demo's embedded broker (Qpid Broker-J), which answers
 * a refused exclusive consumer by closing the whole connection, where RabbitMQ closes the channel
 * only: the connection is the channel's publishing connection, so a refusal must not reach the
 * broker while another read is known to be open.
 */
class DeadLetterReadersOnQpidTest {

    @Test
    void aReadAloneBesideAnOpenReadAndAReadBesideAReadAloneAreRefusedWithoutClosingTheConnection() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (EmbeddedBroker broker = EmbeddedBroker.start(port, "guest", "guest")) {
            ConnectionFactory f = new ConnectionFactory();
            f.setPort(port);
            try (Connection c = f.newConnection()) {
                DeadLetterReaders readers = new DeadLetterReaders("orders", "orders.dlq", c::createChannel);
                Channel read = readers.open();
                assertThrows(OnceOnlyException.class, readers::openAlone, "a read is open");
                assertTrue(c.isOpen(), "the refusal closed the connection");
                read.close();

                Channel alone = readers.openAlone();
                assertThrows(OnceOnlyException.class, readers::open, "the read alone runs");
                assertTrue(c.isOpen(), "the refusal closed the connection");
                alone.close();
                readers.open().close();
                assertTrue(c.isOpen());
            }
        }
    }
}
