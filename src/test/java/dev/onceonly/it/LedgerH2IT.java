package dev.onceonly.it;

/** The ledger on the embedded H2 database (the demo's default). */
class LedgerH2IT extends LedgerContract {

    LedgerH2IT() {
        super(LedgerDatabase.H2);
    }
}
