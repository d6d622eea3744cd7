package dev.onceonly.itapp;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.TextMessage;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import java.util.Collections;

/** Sends to the JMS test queue, and shows what is in its dead-letter queue and exception destination. */
@Path("/jms")
@ApplicationScoped
@Produces(MediaType.APPLICATION_JSON)
public class JmsResource {

    @Resource(lookup = "jms/ordersCf")
    ConnectionFactory factory;

    @Resource(lookup = "jms/orders")
    Queue orders;

    @Resource(lookup = "jms/ordersDlq")
    Queue deadLetters;

    @Resource(lookup = "jms/ordersExceptions")
    Queue exceptions;

    /** Sends the body {@code copies} times, as a producer retrying its send would. */
    @POST
    @Path("/send")
    @Consumes(MediaType.TEXT_PLAIN)
    public int send(String body, @QueryParam("copies") @DefaultValue("1") int copies) {
        try (JMSContext context = factory.createContext()) {
            for (int i = 0; i < copies; i++) {
                context.createProducer().send(orders, body);
            }
        }
        return copies;
    }

    /** The messages in {@code dlq} or {@code exceptions} whose text contains {@code contains}, with their OnceOnly properties. */
    @GET
    @Path("/browse/{queue}")
    public JsonObject browse(@PathParam("queue") String which, @QueryParam("contains") String contains) throws JMSException {
        Queue queue = "dlq".equals(which) ? deadLetters : exceptions;
        JsonArrayBuilder found = Json.createArrayBuilder();
        try (JMSContext context = factory.createContext(); QueueBrowser browser = context.createBrowser(queue)) {
            for (Object o : Collections.list(browser.getEnumeration())) {
                Message m = (Message) o;
                String text = m instanceof TextMessage t ? t.getText() : "";
                if (text == null || !text.contains(contains)) {
                    continue;
                }
                JsonObjectBuilder b = Json.createObjectBuilder().add("body", text);
                for (Object name : Collections.list(m.getPropertyNames())) {
                    if (((String) name).startsWith("onceonly_")) {
                        b.add((String) name, String.valueOf(m.getObjectProperty((String) name)));
                    }
                }
                found.add(b);
            }
        }
        return Json.createObjectBuilder().add("messages", found).build();
    }
}
