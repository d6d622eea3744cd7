package dev.onceonly.internal.support;

import jakarta.persistence.PersistenceException;
import org.junit.jupiter.api.Test;

import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class UniqueViolationTest {

    @Test
    void findsSqlState23505DeepInTheCauseChain() {
        // Shape seen on PostgreSQL and H2: PersistenceException -> ConstraintViolationException -> driver exception.
        SQLException driver = new SQLException("duplicate key value violates unique constraint", "23505", 0);
        Throwable chain = new PersistenceException("could not execute statement",
                new RuntimeException("constraint violation", driver));
        assertEquals(driver, UniqueViolation.find(chain).orElseThrow());
    }

    @Test
    void findsMariaDbDuplicateEntryByVendorCode() {
        SQLException driver = new SQLIntegrityConstraintViolationException("Duplicate entry", "23000", 1062);
        assertEquals(driver, UniqueViolation.find(new PersistenceException(driver)).orElseThrow());
    }

    @Test
    void otherIntegrityViolationsAreNotDuplicates() {
        // MariaDB: NOT NULL (1048) and foreign key (1452) share SQLState 23000 with duplicates.
        assertTrue(UniqueViolation.find(new SQLException("Column cannot be null", "23000", 1048)).isEmpty());
        assertTrue(UniqueViolation.find(new SQLException("foreign key", "23000", 1452)).isEmpty());
        assertTrue(UniqueViolation.find(new SQLException("check violated", "23514", 0)).isEmpty());
        assertTrue(UniqueViolation.find(new PersistenceException("no SQL in here")).isEmpty());
    }

    @Test
    void messageTextIsIgnored() {
        assertTrue(UniqueViolation.find(new SQLException("duplicate key value violates unique constraint", "08006", 0)).isEmpty());
    }

    @Test
    void findsTheViolationInTheNextExceptionOfABatch() {
        BatchUpdateException batch = new BatchUpdateException("batch entry 0 failed", "22000", 0, new int[0]);
        SQLException real = new SQLException("duplicate key", "23505", 0);
        batch.setNextException(real);
        assertEquals(real, UniqueViolation.find(new PersistenceException(batch)).orElseThrow());
    }

    @Test
    void describesTheChainWithCodesButWithoutMessages() {
        Throwable chain = new PersistenceException("could not execute statement",
                new SQLException("Duplicate entry 'secret' for key 'PRIMARY'", "23000", 1062));
        assertEquals("PersistenceException > SQLException[23000/1062]", UniqueViolation.describe(chain));
    }

    @Test
    void survivesACyclicCauseChain() {
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b", a);
        a.initCause(b);
        assertTrue(UniqueViolation.find(a).isEmpty());
    }
}
