package dev.onceonly.docs;

import dev.onceonly.internal.support.LogId;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The documents a user reads keep true: every {@code ```java} block of README.md and docs/*.md
 * compiles against the test classpath, using the public API only, and every relative link and
 * anchor of those documents, BENCHMARKS.md and RELIABILITY.md resolves. One test per document,
 * so a broken one names itself. And the troubleshooting page lists every log ID.
 *
 * <p>A block compiles as a compilation unit of its own (its package replaced by one per block). A
 * block marked {@code <!-- fragment -->} on the line before it holds class members: its imports
 * stay on top and the rest is wrapped in a class.
 */
class DocumentationTest {

    private static final Path ROOT = Path.of("");
    private static final JavaCompiler JAVAC = ToolProvider.getSystemJavaCompiler();
    /** One for every document: it reads the classpath's jars once. */
    private static final StandardJavaFileManager FILES = JAVAC.getStandardFileManager(null, null, null);

    @TestFactory
    Stream<DynamicTest> javaBlocksCompile() throws IOException {
        return javaDocuments().map(doc -> DynamicTest.dynamicTest(doc.toString(), () -> {
            List<JavaBlock> blocks = Markdown.read(doc).javaBlocks();
            List<String> problems = new ArrayList<>();
            for (JavaBlock block : blocks) {
                problems.addAll(block.publicApiViolations());
            }
            problems.addAll(compile(blocks));
            assertTrue(problems.isEmpty(), doc + ":\n" + String.join("\n", problems));
        }));
    }

    @TestFactory
    Stream<DynamicTest> linksResolve() throws IOException {
        return linkedDocuments().map(doc -> DynamicTest.dynamicTest(doc.toString(), () -> {
            List<String> broken = Markdown.read(doc).brokenLinks();
            assertEquals(List.of(), broken, doc + ": links that do not resolve");
        }));
    }

    /** Operators look a log line up by its ID: the troubleshooting page lists every one, and no other. */
    @Test
    void troubleshootingListsEveryLogId() {
        Set<String> listed = new TreeSet<>();
        Matcher m = Pattern.compile("^\\| `(ONCE\\d{4}[IWE])` \\|", Pattern.MULTILINE)
                .matcher(readString(Path.of("docs", "troubleshooting.md")));
        while (m.find()) {
            listed.add(m.group(1));
        }
        Set<String> logged = new TreeSet<>();
        for (LogId id : LogId.values()) {
            logged.add(id.name());
        }
        assertEquals(logged, listed);
    }

    /** The README stays a front page; the long form lives in the guide. */
    @Test
    void readmeStaysShort() {
        long lines = readString(ROOT.resolve("README.md")).lines().count();
        assertTrue(lines <= 300, "README.md has " + lines + " lines, more than 300");
    }

    /** README.md and every document under docs/. */
    static Stream<Path> javaDocuments() throws IOException {
        List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> files = Files.list(Path.of("docs"))) {
            files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs.stream();
    }

    /** The same, with the two reports. */
    static Stream<Path> linkedDocuments() throws IOException {
        return Stream.concat(javaDocuments(), Stream.of(Path.of("BENCHMARKS.md"), Path.of("RELIABILITY.md")));
    }

    /** javac's errors for the blocks, each with its document line; empty when all compile. */
    static List<String> compile(List<JavaBlock> blocks) throws IOException {
        if (blocks.isEmpty()) {
            return List.of();
        }
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        Path out = Files.createTempDirectory("doc-blocks");
        try {
            List<JavaFileObject> units = new ArrayList<>();
            for (int i = 0; i < blocks.size(); i++) {
                units.add(new Source(blocks.get(i), "docblock.b" + i));
            }
            List<String> options = List.of("-proc:none", "-d", out.toString(),
                    "-classpath", System.getProperty("java.class.path"));
            JAVAC.getTask(null, FILES, diagnostics, options, null, units).call();
        } finally {
            try (Stream<Path> walk = Files.walk(out)) {
                walk.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
            }
        }
        List<String> errors = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() == Diagnostic.Kind.ERROR) {
                Source source = (Source) d.getSource();
                errors.add(source == null ? d.getMessage(null)
                        : "line " + source.block.documentLine(d.getLineNumber()) + ": " + d.getMessage(null));
            }
        }
        return errors;
    }

    /** One block as javac reads it: under a package of its own, in a file named after its public type. */
    private static final class Source extends SimpleJavaFileObject {
        final JavaBlock block;
        private final String code;

        Source(JavaBlock block, String pkg) {
            super(URI.create("string:///" + pkg.replace('.', '/') + "/" + block.publicTypeName() + ".java"),
                    Kind.SOURCE);
            this.block = block;
            this.code = block.compilationUnit(pkg);
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return code;
        }
    }

    static String readString(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
