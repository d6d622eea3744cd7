package dev.onceonly.it;

/**
 * The ledger on MariaDB, under REPEATABLE READ (InnoDB's default, set explicitly in db/mariadb.xml),
 * on a server in the database-only mode: its claims are in the table onceonly_claim, no Redis.
 */
class LedgerMariadbIT extends LedgerContract {

    LedgerMariadbIT() {
        super(LedgerDatabase.MARIADB);
    }
}
