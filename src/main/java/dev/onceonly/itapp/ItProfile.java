package dev.onceonly.itapp;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import jakarta.enterprise.inject.spi.WithAnnotations;
import org.eclipse.microprofile.config.ConfigProvider;

import java.util.Arrays;

/**
 * Switches the test consumers off unless the {@code it} configuration profile is active: Liberty's
 * Reactive Messaging refuses to start an application whose {@code @Incoming} methods or emitters
 * have no configured channel, and only that profile configures theirs.
 */
public class ItProfile implements Extension {

    static final String PROFILE = "it";

    void vetoUnlessActive(@Observes @WithAnnotations(ApplicationScoped.class) ProcessAnnotatedType<?> pat) {
        if (pat.getAnnotatedType().getJavaClass().getPackageName().equals(ItProfile.class.getPackageName()) && !active()) {
            pat.veto();
        }
    }

    static boolean active() {
        return ConfigProvider.getConfig(ItProfile.class.getClassLoader()).getOptionalValue("mp.config.profile", String.class)
                .map(p -> Arrays.stream(p.split(",")).map(String::trim).anyMatch(PROFILE::equals))
                .orElse(false);
    }
}
