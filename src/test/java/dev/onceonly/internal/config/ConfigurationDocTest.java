package dev.onceonly.internal.config;

import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.onceonly.internal.support.Durations;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code docs/configuration.md} is what the property catalogue renders, and the catalogue is sound:
 * every part's set is in the document, no name is listed twice, every default is a value its own
 * property accepts. With {@code -Dconfiguration.write=true} the document is rewritten instead.
 */
class ConfigurationDocTest {

    private static final Path DOC = Path.of("docs", "configuration.md");

    @Test
    void theCommittedDocumentIsWhatTheCatalogueRenders() throws IOException {
        String rendered = ConfigurationDoc.render();
        if (Boolean.getBoolean("configuration.write")) {
            Files.writeString(DOC, rendered, StandardCharsets.UTF_8);
            return;
        }
        String committed = Files.exists(DOC) ? Files.readString(DOC, StandardCharsets.UTF_8) : "";
        if (!committed.equals(rendered)) {
            fail(DOC + " is out of date with the property catalogue (or was edited by hand). Regenerate it with:\n    "
                    + ConfigurationDoc.REGENERATE + "\nand commit it.");
        }
    }

    /** A catalogue class whose set is left out of the document would be read but not documented. */
    @Test
    void everyPropertySetOfTheLibraryIsInTheDocument() throws Exception {
        List<JavaField> sets = new ClassFileImporter().withImportOption(new ImportOption.DoNotIncludeTests())
                .importPackages("dev.onceonly").stream()
                .flatMap(c -> c.getFields().stream())
                .filter(f -> f.getRawType().isEquivalentTo(PropertySet.class))
                .toList();
        assertTrue(sets.size() >= ConfigurationDoc.SETS.size(), sets.toString());
        for (JavaField field : sets) {
            java.lang.reflect.Field f = field.reflect();
            assertTrue(Modifier.isStatic(f.getModifiers()) && Modifier.isFinal(f.getModifiers()), field.getFullName());
            f.setAccessible(true);
            assertTrue(ConfigurationDoc.SETS.contains((PropertySet) f.get(null)), field.getFullName() + " is not in ConfigurationDoc.SETS");
        }
    }

    @Test
    void noNameIsListedTwice() {
        Set<String> names = new HashSet<>();
        for (PropertySet set : ConfigurationDoc.SETS) {
            for (Property p : set.properties()) {
                assertTrue(names.add(p.name()), p.name());
            }
        }
    }

    /** The reader parses a default like a written value: a default it would refuse is a catalogue bug. */
    @Test
    void everyDefaultIsAValueItsPropertyAccepts() {
        for (PropertySet set : ConfigurationDoc.SETS) {
            for (Property p : set.properties()) {
                String v = p.fallback();
                if (v == null) {
                    assertNotNull(p.shown() == null ? "none" : p.shown());
                    continue;
                }
                switch (p.type()) {
                    case BOOLEAN -> assertNotNull(ConfigReader.parseBoolean(v), p.name());
                    case INTEGER -> {
                        long n = Long.parseLong(v);
                        assertTrue(n >= p.min() && n <= p.max(), p.name());
                    }
                    case DECIMAL -> Double.parseDouble(v);
                    case DURATION -> assertNotNull(Durations.parse(v), p.name());
                    case CHOICE -> assertTrue(p.choices().contains(v), p.name());
                    default -> assertEquals(v.trim(), v, p.name());
                }
            }
        }
    }
}
