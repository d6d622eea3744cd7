package dev.onceonly.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

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

    /** The packages applications and store implementers write against; everything else is {@code internal}. */
    private static final String[] PUBLIC_PACKAGES = {"dev.onceonly.api..", "dev.onceonly.http..", "dev.onceonly.spi..", "dev.onceonly.rabbitmq"};

    /** What applications write against (docs/architecture.md): api, http, spi and the connector's metadata. */
    private static final DescribedPredicate<JavaClass> PUBLIC_API = resideInAnyPackage(PUBLIC_PACKAGES)
            .as("the public API (api, http, spi, the connector's metadata in rabbitmq)");

    /** A name of one of OnceOnly's types (its top-level class), or a package imported whole. */
    private static final Pattern ONCEONLY_NAME = Pattern.compile("dev\\.onceonly(?:\\.[a-z]\\w*)+(?:\\.[A-Z]\\w*|\\.\\*)");

    /** The guard in plain Java: testable without CDI, a server or a broker. */
    @ArchTest
    static final ArchRule engineUsesOnlyApiSpiSupportAndTheJdk = plainJava("dev.onceonly.internal.engine..");

    /** The outbox's relay and SPI, in plain Java like the guard: its table and broker are adapters beside it. */
    @ArchTest
    static final ArchRule outboxCoreUsesOnlyApiSpiSupportAndTheJdk = plainJava("dev.onceonly.internal.outbox");

    /** The ledger's purge, in plain Java over {@code spi.Ledger}: the table is {@code ledger.jpa}. */
    @ArchTest
    static final ArchRule ledgerCoreUsesOnlyApiSpiSupportAndTheJdk = plainJava("dev.onceonly.internal.ledger");

    /** Stored results beside the guard: plain Java and JSON-B, over {@code spi.ResultStore}; the stores are adapters, the wiring is cdi's. */
    @ArchTest
    static final ArchRule resultsUseOnlyApiSpiSupportJsonbAndTheJdk = classes().that().resideInAPackage("dev.onceonly.internal.result..")
            .should().onlyDependOnClassesThat().resideInAnyPackage("dev.onceonly.internal.result..", "dev.onceonly.api..",
                    "dev.onceonly.spi..", "dev.onceonly.internal.support..", "java..", "jakarta.json.bind..");

    /** The dead-letter operations, in plain Java like the guard: the broker is the connector's, beside them. */
    @ArchTest
    static final ArchRule deadLetterCoreUsesOnlyApiSpiSupportAndTheJdk = plainJava("dev.onceonly.internal.deadletter");

    /** Adapters reach the guard through api and spi only; the composition root (cdi, config) wires the engine. */
    @ArchTest
    static final ArchRule adaptersNeverUseTheEngine = noClasses()
            .that().resideInAnyPackage("dev.onceonly.internal.rabbitmq..", "dev.onceonly.internal.jms..", "dev.onceonly.internal.redis..", "dev.onceonly.internal.memory..",
                    "dev.onceonly.internal.jdbc..", "dev.onceonly.internal.jta..", "dev.onceonly.internal.observability..", "dev.onceonly.http..", "dev.onceonly.spi..",
                    "dev.onceonly.api..", "dev.onceonly.internal.support..", "dev.onceonly.internal.outbox..", "dev.onceonly.internal.ledger..",
                    "dev.onceonly.internal.deadletter..")
            .should().dependOnClassesThat().resideInAPackage("dev.onceonly.internal.engine..");

    /** The contract types depend on nothing of OnceOnly's but each other and the neutral helpers. */
    @ArchTest
    static final ArchRule apiAndSpiStandAlone = classes()
            .that().resideInAnyPackage("dev.onceonly.api..", "dev.onceonly.spi..", "dev.onceonly.internal.support..")
            .should().onlyDependOnClassesThat().resideOutsideOfPackages(
                    "dev.onceonly.internal.engine..", "dev.onceonly.internal.cdi..", "dev.onceonly.internal.config..", "dev.onceonly.internal.rabbitmq..", "dev.onceonly.internal.jms..",
                    "dev.onceonly.internal.redis..", "dev.onceonly.internal.memory..", "dev.onceonly.internal.jdbc..", "dev.onceonly.internal.jta..", "dev.onceonly.internal.observability..",
                    "dev.onceonly.http..", "dev.onceonly.demo..", "dev.onceonly.internal.outbox..", "dev.onceonly.internal.ledger..",
                    "dev.onceonly.internal.deadletter..");

    /**
     * The OpenTelemetry API is there only with MicroProfile Telemetry: observability, which the
     * extension vetoes without it, is the one package that may touch it. The connector, the outbox
     * and the interceptor trace messages through {@code spi.MessageTracing}.
     */
    @ArchTest
    static final ArchRule onlyObservabilityUsesOpenTelemetry = noClasses()
            .that().resideOutsideOfPackage("dev.onceonly.internal.observability..")
            .should().dependOnClassesThat().resideInAPackage("io.opentelemetry..");

    /**
     * The MicroProfile Metrics API is there only with {@code mpMetrics}: observability, whose
     * listeners on it the extension adds only when the API is deployed, is the one package that may
     * touch it. The extension names nothing of it, so it loads without the feature.
     */
    @ArchTest
    static final ArchRule onlyObservabilityUsesMicroProfileMetrics = noClasses()
            .that().resideOutsideOfPackage("dev.onceonly.internal.observability..")
            .should().dependOnClassesThat().resideInAPackage("org.eclipse.microprofile.metrics..");

    /** The demo is what users copy: it uses the public API only. */
    @ArchTest
    static final ArchRule demoUsesThePublicApiOnly = classes()
            .that().resideInAPackage("dev.onceonly.demo..")
            .should().onlyDependOnClassesThat(resideOutsideOfPackage("dev.onceonly..").or(resideInAPackage("dev.onceonly.demo..")).or(PUBLIC_API));

    /**
     * The smallest application a user writes, {@code samples/}, and the applications the integration
     * tests deploy, {@code src/test/itapp}, use the public API only. They are built on their own
     * against the installed library, so their classes are not among these: their sources' names of
     * OnceOnly's types are checked against the same {@link #PUBLIC_API}.
     */
    @ArchTest
    static void samplesAndTestApplicationsUseThePublicApiOnly(JavaClasses library) throws IOException {
        List<Path> sources = new ArrayList<>();
        for (String tree : List.of("samples", "src/test/itapp")) {
            try (Stream<Path> files = Files.walk(Path.of(tree))) {
                List<Path> java = files.filter(f -> f.toString().endsWith(".java")).toList();
                assertFalse(java.isEmpty(), "no sources under " + tree + " (run from the project's directory)");
                sources.addAll(java);
            }
        }
        List<String> outside = new ArrayList<>();
        for (Path source : sources) {
            Matcher name = ONCEONLY_NAME.matcher(Files.readString(source));
            while (name.find()) {
                if (!isPublicApi(library, name.group())) {
                    outside.add(source + ": " + name.group());
                }
            }
        }
        assertEquals(List.of(), outside, "samples/ or src/test/itapp use more than " + PUBLIC_API.getDescription());
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
            .that().resideOutsideOfPackage("dev.onceonly.internal.cdi..")
            .should().dependOnClassesThat().resideInAPackage("dev.onceonly.internal.cdi..");

    /** Nothing in the library depends on the demo. */
    @ArchTest
    static final ArchRule libraryNeverUsesTheDemo = noClasses()
            .that().resideOutsideOfPackage("dev.onceonly.demo..")
            .should().dependOnClassesThat().resideInAPackage("dev.onceonly.demo..");

    /**
     * No library type is public by accident: a type outside {@code internal} (and the demo) is in a
     * public package, and a new package is either public API or {@code internal}.
     */
    @ArchTest
    static final ArchRule everyTypeIsPublicApiOrInternal = classes()
            .that().resideOutsideOfPackages("dev.onceonly.internal..", "dev.onceonly.demo..")
            .should().resideInAnyPackage(PUBLIC_PACKAGES);

    /**
     * The public API never hands out or asks for an internal type: the public and protected members
     * of its public types name only public API, other libraries' and the JDK's types.
     */
    @ArchTest
    static final ArchRule theApiNamesNoInternalType = classes()
            .that(PUBLIC_API).and().arePublic()
            .should(new ArchCondition<>("name no internal type in a public member") {
                @Override
                public void check(JavaClass type, ConditionEvents events) {
                    for (JavaMember member : type.getMembers()) {
                        if (!member.getModifiers().contains(JavaModifier.PUBLIC) && !member.getModifiers().contains(JavaModifier.PROTECTED)) {
                            continue;
                        }
                        for (JavaClass named : signature(member)) {
                            if (named.getPackageName().startsWith("dev.onceonly.internal")) {
                                events.add(SimpleConditionEvent.violated(member, member.getFullName() + " names " + named.getName()));
                            }
                        }
                    }
                }
            });

    /** Features (a public package, or one tree under {@code internal}) never run in circles. */
    @ArchTest
    static final ArchRule featuresAreFreeOfCycles = slices().assignedFrom(new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass type) {
            String[] parts = type.getPackageName().split("\\.");
            if (parts.length < 3) {
                return SliceIdentifier.ignore();
            }
            return SliceIdentifier.of(parts[2].equals("internal") && parts.length > 3 ? parts[3] : parts[2]);
        }

        @Override
        public String getDescription() {
            return "OnceOnly's features";
        }
    }).should().beFreeOfCycles();

    /** Nor does a feature's tree run in circles inside (outbox and outbox.jpa, ledger and ledger.jpa). */
    @ArchTest
    static final ArchRule subpackagesAreFreeOfCycles = slices().matching("dev.onceonly.(**)").should().beFreeOfCycles();

    /** The types a member's signature names: its type, return type, parameters and what it throws. */
    private static List<JavaClass> signature(JavaMember member) {
        List<JavaClass> named = new ArrayList<>();
        if (member instanceof JavaField field) {
            named.add(field.getRawType());
        } else if (member instanceof JavaCodeUnit code) {
            named.add(code.getRawReturnType());
            named.addAll(code.getRawParameterTypes());
            code.getThrowsClause().getTypes().forEach(named::add);
        }
        return named;
    }

    /** Classes of {@code pkg} use only each other, api, spi, support and the JDK: no CDI, JPA or connector. */
    private static ArchRule plainJava(String pkg) {
        return classes().that().resideInAPackage(pkg)
                .should().onlyDependOnClassesThat().resideInAnyPackage(
                        pkg, "dev.onceonly.api..", "dev.onceonly.spi..", "dev.onceonly.internal.support..", "java..");
    }
}
