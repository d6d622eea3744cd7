package dev.onceonly.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import dev.onceonly.rabbitmq.OutgoingRabbitMetadata;
import dev.onceonly.rabbitmq.RabbitHeaders;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The layers of docs/architecture.md, checked on the compiled main classes: what each package may
 * use. A change that breaks one fails the build, naming the offending class and dependency.
 */
@AnalyzeClasses(packages = "dev.onceonly", importOptions = ImportOption.DoNotIncludeTests.class)
class LayeringTest {

    /** What applications write against (README): {@code api}, {@code http} and the connector's metadata. */
    private static final DescribedPredicate<JavaClass> PUBLIC_API = resideInAnyPackage("dev.onceonly.api..", "dev.onceonly.http..")
            .or(belongToAnyOf(IncomingRabbitMetadata.class, OutgoingRabbitMetadata.class, RabbitHeaders.class))
            .as("the public API (api, http, the connector's metadata)");

    /** A name of one of OnceOnly's types (its top-level class), or a package imported whole. */
    private static final Pattern ONCEONLY_NAME = Pattern.compile("dev\\.onceonly(?:\\.[a-z]\\w*)+(?:\\.[A-Z]\\w*|\\.\\*)");

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
    static final ArchRule demoUsesThePublicApiOnly = classes()
            .that().resideInAPackage("dev.onceonly.demo..")
            .should().onlyDependOnClassesThat(resideOutsideOfPackage("dev.onceonly..").or(resideInAPackage("dev.onceonly.demo..")).or(PUBLIC_API));

    /**
     * The smallest application a user writes, {@code samples/}, uses the public API only. It is built
     * on its own against the installed library, so its classes are not among these: its sources'
     * names of OnceOnly's types are checked against the same {@link #PUBLIC_API}.
     */
    @ArchTest
    static void samplesUseThePublicApiOnly(JavaClasses library) throws IOException {
        List<Path> sources;
        try (Stream<Path> files = Files.walk(Path.of("samples"))) {
            sources = files.filter(f -> f.toString().endsWith(".java")).toList();
        }
        assertFalse(sources.isEmpty(), "no sources under samples/ (run from the project's directory)");
        List<String> outside = new ArrayList<>();
        for (Path source : sources) {
            Matcher name = ONCEONLY_NAME.matcher(Files.readString(source));
            while (name.find()) {
                if (!isPublicApi(library, name.group())) {
                    outside.add(source + ": " + name.group());
                }
            }
        }
        assertEquals(List.of(), outside, "samples/ uses more than " + PUBLIC_API.getDescription());
    }

    /** {@code name} is a public type, or a package imported whole whose every type is public. */
    private static boolean isPublicApi(JavaClasses library, String name) {
        if (name.endsWith(".*")) {
            String pkg = name.substring(0, name.length() - 2);
            return library.stream().anyMatch(c -> c.getPackageName().equals(pkg))
                    && library.stream().filter(c -> c.getPackageName().equals(pkg)).allMatch(PUBLIC_API);
        }
        return library.contain(name) && PUBLIC_API.test(library.get(name));
    }

    /**
     * The composition root is on top: nothing else uses {@code cdi}. In particular observability,
     * which {@code cdi} wires, gets what it needs handed down ({@code TelemetrySettings}).
     */
    @ArchTest
    static final ArchRule onlyCdiUsesCdi = noClasses()
            .that().resideOutsideOfPackage("dev.onceonly.cdi..")
            .should().dependOnClassesThat().resideInAPackage("dev.onceonly.cdi..");

    /** Nothing in the library depends on the demo. */
    @ArchTest
    static final ArchRule libraryNeverUsesTheDemo = noClasses()
            .that().resideOutsideOfPackage("dev.onceonly.demo..")
            .should().dependOnClassesThat().resideInAPackage("dev.onceonly.demo..");

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices().matching("dev.onceonly.(*)..").should().beFreeOfCycles();

    /** Nor does a feature's tree run in circles inside (outbox and outbox.jpa, ledger and ledger.jpa). */
    @ArchTest
    static final ArchRule subpackagesAreFreeOfCycles = slices().matching("dev.onceonly.(**)").should().beFreeOfCycles();

    /** Classes of {@code pkg} use only each other, api, spi, support and the JDK: no CDI, JPA or connector. */
    private static ArchRule plainJava(String pkg) {
        return classes().that().resideInAPackage(pkg)
                .should().onlyDependOnClassesThat().resideInAnyPackage(
                        pkg, "dev.onceonly.api..", "dev.onceonly.spi..", "dev.onceonly.support..", "java..");
    }
}
