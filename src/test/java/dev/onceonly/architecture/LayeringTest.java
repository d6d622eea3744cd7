package dev.onceonly.architecture;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The layers of docs/architecture.md, checked on the compiled main classes: what each package may
 * use. A change that breaks one fails the build, naming the offending class and dependency.
 */
@AnalyzeClasses(packages = "dev.onceonly", importOptions = ImportOption.DoNotIncludeTests.class)
class LayeringTest {

    /** The guard in plain Java: testable without CDI, a server or a broker. */
    @ArchTest
    static final ArchRule engineUsesOnlyApiSpiSupportAndTheJdk = plainJava("dev.onceonly.engine..");

    /** The outbox's relay and SPI, in plain Java like the guard: its table and broker are adapters beside it. */
    @ArchTest
    static final ArchRule outboxCoreUsesOnlyApiSpiSupportAndTheJdk = plainJava("dev.onceonly.outbox");

    /** The ledger's purge, in plain Java over {@code spi.Ledger}: the table is {@code ledger.jpa}. */
    @ArchTest
    static final ArchRule ledgerCoreUsesOnlyApiSpiSupportAndTheJdk = plainJava("dev.onceonly.ledger");

    /** Adapters reach the guard through api and spi only; the composition root (cdi, config) wires the engine. */
    @ArchTest
    static final ArchRule adaptersNeverUseTheEngine = noClasses()
            .that().resideInAnyPackage("dev.onceonly.rabbitmq..", "dev.onceonly.jms..", "dev.onceonly.redis..", "dev.onceonly.memory..",
                    "dev.onceonly.jdbc..", "dev.onceonly.jta..", "dev.onceonly.observability..", "dev.onceonly.http..", "dev.onceonly.spi..",
                    "dev.onceonly.api..", "dev.onceonly.support..", "dev.onceonly.outbox..", "dev.onceonly.ledger..")
            .should().dependOnClassesThat().resideInAPackage("dev.onceonly.engine..");

    /** The contract types depend on nothing of OnceOnly's but each other and the neutral helpers. */
    @ArchTest
    static final ArchRule apiAndSpiStandAlone = classes()
            .that().resideInAnyPackage("dev.onceonly.api..", "dev.onceonly.spi..", "dev.onceonly.support..")
            .should().onlyDependOnClassesThat().resideOutsideOfPackages(
                    "dev.onceonly.engine..", "dev.onceonly.cdi..", "dev.onceonly.config..", "dev.onceonly.rabbitmq..", "dev.onceonly.jms..",
                    "dev.onceonly.redis..", "dev.onceonly.memory..", "dev.onceonly.jdbc..", "dev.onceonly.jta..", "dev.onceonly.observability..",
                    "dev.onceonly.http..", "dev.onceonly.demo..", "dev.onceonly.outbox..", "dev.onceonly.ledger..");

    /**
     * The OpenTelemetry API is there only with MicroProfile Telemetry: observability, which the
     * extension vetoes without it, is the one package that may touch it. The connector, the outbox
     * and the interceptor trace messages through {@code spi.MessageTracing}.
     */
    @ArchTest
    static final ArchRule onlyObservabilityUsesOpenTelemetry = noClasses()
            .that().resideOutsideOfPackage("dev.onceonly.observability..")
            .should().dependOnClassesThat().resideInAPackage("io.opentelemetry..");

    /** The demo is what users copy: it uses the public API only. */
    @ArchTest
    static final ArchRule demoUsesThePublicApiOnly = noClasses()
            .that().resideInAPackage("dev.onceonly.demo..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.onceonly.engine..", "dev.onceonly.spi..",
                    "dev.onceonly.cdi..", "dev.onceonly.config..", "dev.onceonly.support..", "dev.onceonly.redis..",
                    "dev.onceonly.memory..", "dev.onceonly.jdbc..", "dev.onceonly.jta..", "dev.onceonly.observability..", "dev.onceonly.jms..",
                    "dev.onceonly.outbox..", "dev.onceonly.ledger..");

    /** Nothing in the library depends on the demo. */
    @ArchTest
    static final ArchRule libraryNeverUsesTheDemo = noClasses()
            .that().resideOutsideOfPackage("dev.onceonly.demo..")
            .should().dependOnClassesThat().resideInAPackage("dev.onceonly.demo..");

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices().matching("dev.onceonly.(*)..").should().beFreeOfCycles();

    /** Classes of {@code pkg} use only each other, api, spi, support and the JDK: no CDI, JPA or connector. */
    private static ArchRule plainJava(String pkg) {
        return classes().that().resideInAPackage(pkg)
                .should().onlyDependOnClassesThat().resideInAnyPackage(
                        pkg, "dev.onceonly.api..", "dev.onceonly.spi..", "dev.onceonly.support..", "java..");
    }
}
