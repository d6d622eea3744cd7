package dev.onceonly.itapp;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The read-outs of the test consumers live under {@code /itapp/api}. */
@ApplicationPath("/api")
public class ItApplication extends Application {
}
