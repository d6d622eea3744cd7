package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** How the outbox numbers a handler's messages, on Mariadb (for the servers: this machine's, in a scratch schema or database). */
class JtaOutboxMariadbTest extends JtaOutboxTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.MARIADB;
    }
}
