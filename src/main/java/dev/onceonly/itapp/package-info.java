/**
 * Consumers and a REST resource that the integration tests drive through a real broker. Their
 * channels are configured only in the {@code it} configuration profile (see
 * {@code META-INF/microprofile-config.properties}); without it, {@link dev.onceonly.itapp.ItProfile}
 * switches the beans off and the resource answers 404. Not part of the library's API.
 */
package dev.onceonly.itapp;
