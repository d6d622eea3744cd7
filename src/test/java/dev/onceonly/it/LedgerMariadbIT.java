package dev.onceonly.it;

/** The ledger on MariaDB, under REPEATABLE READ (InnoDB's default, set explicitly in db/mariadb.xml). */
class LedgerMariadbIT extends LedgerContract {

    LedgerMariadbIT() {
        super(LedgerDatabase.MARIADB);
    }
}
