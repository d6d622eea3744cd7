package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** How the outbox numbers a handler's messages, on H2 (for the servers: this machine's, in a scratch schema or database). */
class JtaOutboxH2Test extends JtaOutboxTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.H2;
    }
}
