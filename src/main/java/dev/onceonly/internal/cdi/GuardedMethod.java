package dev.onceonly.internal.cdi;

import dev.onceonly.api.IdempotencyKey;
import dev.onceonly.api.MessageView;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.jms.JmsMessageView;
import dev.onceonly.internal.result.ResultSettings;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.Handover;
import dev.onceonly.internal.support.LogId;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import org.eclipse.microprofile.reactive.messaging.Message;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What the interceptor needs to know about one guarded method, worked out once at startup: its
 * settings, where the message and the {@code @IdempotencyKey} come from, and what to return when
 * the method is skipped as a duplicate.
 *
 * <p>The payload parameter is the first one that is neither a {@link MessageView} nor a
 * {@code Message} (Reactive Messaging passes the payload first, metadata after it); for a
 * {@code Message} parameter, its payload.
 */
final class GuardedMethod {

    private static volatile Jsonb jsonb;

    private final ConsumerSettings settings;
    /** How it keeps its results; {@code null} when it keeps none. */
    private final ResultSettings results;
    private final Type returnType;
    private final int viewIndex;     // parameter implementing MessageView, or -1
    private final int messageIndex;  // parameter of type Message<?>, or -1
    private final int jmsIndex;      // parameter of type jakarta.jms.Message, or -1
    private final int keyIndex;      // @IdempotencyKey parameter, or -1
    private final int payloadIndex;  // the payload, or -1
    private final Object skippedResult;
    private final boolean incoming;
    /** Whether its channel hands it batches: its payload parameter is a {@code List} of payloads. */
    private final boolean batch;
    private final String name;
    /** Set once {@link LogId#ONCE0305W} was logged for this method. */
    private final AtomicBoolean warnedUnposted = new AtomicBoolean();

    GuardedMethod(Method method, ConsumerSettings settings, boolean batch, ResultSettings results) {
        this.settings = settings;
        this.batch = batch;
        this.results = results;
        this.returnType = method.getGenericReturnType();
        this.name = method.getDeclaringClass().getSimpleName() + "." + method.getName();
        // By name: applications without Reactive Messaging never load its classes.
        this.incoming = Arrays.stream(method.getAnnotations())
                .anyMatch(a -> a.annotationType().getName().equals("org.eclipse.microprofile.reactive.messaging.Incoming"));
        Class<?>[] types = method.getParameterTypes();
        int view = -1;
        int message = -1;
        int jms = -1;
        int key = -1;
        int payload = -1;
        for (int i = 0; i < types.length; i++) {
            if (view < 0 && MessageView.class.isAssignableFrom(types[i])) {
                view = i;
            } else if (message < 0 && isA(types[i], REACTIVE_MESSAGE)) {
                message = i;
            } else if (jms < 0 && isA(types[i], JMS_MESSAGE)) {
                jms = i;
            } else if (payload < 0) {
                payload = i;
            }
            if (key < 0 && method.getParameters()[i].isAnnotationPresent(IdempotencyKey.class)) {
                key = i;
            }
        }
        this.viewIndex = view;
        this.messageIndex = message;
        this.jmsIndex = jms;
        this.keyIndex = key;
        this.payloadIndex = payload;
        this.skippedResult = skippedResult(method.getReturnType());
    }

    ConsumerSettings settings() {
        return settings;
    }

    /** {@return how it keeps its results ({@code result.*}); {@code null} when it keeps none} */
    ResultSettings results() {
        return results;
    }

    /** {@return its generic return type, the type of the results it keeps} */
    Type returnType() {
        return returnType;
    }

    /** {@return {@code <class simple name>.<method>}, for messages} */
    String name() {
        return name;
    }

    /** Whether Reactive Messaging invokes this method ({@code @Incoming}) for each message of a channel. */
    boolean incoming() {
        return incoming;
    }

    /** Whether its channel hands it batches: a {@code List} of payloads per call. */
    boolean batch() {
        return batch;
    }

    /** Whether a Jakarta Messaging listener ({@code onMessage(jakarta.jms.Message)}) is guarded. */
    boolean jms() {
        return jmsIndex >= 0;
    }

    /** What a skipped (duplicate) call returns: {@code null}, or a primitive's zero. */
    Object skippedResult() {
        return skippedResult;
    }

    Object parameterKey(Object[] args) {
        return keyIndex < 0 ? null : args[keyIndex];
    }

    /**
     * The delivery this call was made for: a received JMS message; else the one a connector posted
     * under this call's payload object, if any; else a dispatch of the message the parameters carry
     * — a {@link MessageView} parameter, a {@code Message} that unwraps to one, or a view over the
     * payload with no exchange and routing key.
     */
    Dispatch dispatch(Object[] args, Handover handover) {
        if (jmsIndex >= 0) {
            return Dispatch.of(JmsMessages.view(args[jmsIndex]));
        }
        Object payload = payloadIndex < 0 ? null : args[payloadIndex];
        Object message = messageIndex < 0 ? null : args[messageIndex];
        if (message != null) {
            payload = ReactiveMessages.payload(message);
        }
        Dispatch posted = handover.take(payload);
        if (posted != null) {
            return posted;
        }
        MessageView view = null;
        String what = "the message its parameters carry";
        if (viewIndex >= 0 && args[viewIndex] != null) {
            view = (MessageView) args[viewIndex];
        } else if (message != null) {
            view = ReactiveMessages.view(message);
        }
        if (view == null) {
            view = MessageView.of("", "", null, Map.of(), bytes(payload));
            what = "its payload alone (no exchange, routing key or message id)";
        }
        if (incoming && warnedUnposted.compareAndSet(false, true)) {
            // Identity is the only link between a delivery and the call made for it: a payload
            // copied or converted on the way breaks it silently, and the key changes with it.
            LogId.ONCE0305W.log(name, what);
        }
        return Dispatch.of(view);
    }

    /** {@return the list of payloads a {@linkplain #batch() batch} call received} */
    List<?> payloads(Object[] args) {
        return (List<?>) args[payloadIndex];
    }

    /**
     * The deliveries of a batch call: those a connector posted under this very list; else one
     * dispatch per payload, over the payload alone.
     */
    List<? extends Dispatch> batchDispatches(List<?> payloads, Handover handover) {
        List<? extends Dispatch> posted = handover.takeBatch(payloads);
        if (posted != null) {
            return posted;
        }
        if (warnedUnposted.compareAndSet(false, true)) {
            LogId.ONCE0305W.log(name, "its payloads alone (no exchange, routing key or message id)");
        }
        List<Dispatch> plain = new ArrayList<>(payloads.size());
        for (Object p : payloads) {
            plain.add(Dispatch.of(MessageView.of("", "", null, Map.of(), bytes(p))));
        }
        return plain;
    }

    /** {@return the arguments of a batch call with only the payloads at {@code positions}} */
    Object[] withPayloads(Object[] args, List<?> payloads, List<Integer> positions) {
        List<Object> some = new ArrayList<>(positions.size());
        for (int i : positions) {
            some.add(payloads.get(i));
        }
        Object[] copy = args.clone();
        copy[payloadIndex] = some;
        return copy;
    }

    private static final String REACTIVE_MESSAGE = "org.eclipse.microprofile.reactive.messaging.Message";
    private static final String JMS_MESSAGE = "jakarta.jms.Message";

    /**
     * Whether the type is or implements the named one, tested by name so that applications without
     * Reactive Messaging or Jakarta Messaging never load their classes.
     */
    private static boolean isA(Class<?> type, String name) {
        if (type == null) {
            return false;
        }
        if (type.getName().equals(name)) {
            return true;
        }
        for (Class<?> i : type.getInterfaces()) {
            if (isA(i, name)) {
                return true;
            }
        }
        return isA(type.getSuperclass(), name);
    }

    /** Touches Jakarta Messaging classes only when a method really has a JMS message parameter. */
    private static final class JmsMessages {
        static MessageView view(Object message) {
            return JmsMessageView.of((jakarta.jms.Message) message);
        }
    }

    /** Touches Reactive Messaging classes only when a method really has a Message parameter. */
    private static final class ReactiveMessages {
        static MessageView view(Object message) {
            try {
                return ((Message<?>) message).unwrap(MessageView.class);
            } catch (RuntimeException notAView) {
                return null;
            }
        }

        static Object payload(Object message) {
            return ((Message<?>) message).getPayload();
        }
    }

    private static byte[] bytes(Object payload) {
        if (payload == null) {
            return new byte[0];
        }
        if (payload instanceof byte[] b) {
            return b;
        }
        if (payload instanceof CharSequence s) {
            return s.toString().getBytes(StandardCharsets.UTF_8);
        }
        // A stable representation of a typed payload, so the same object always hashes the same.
        return json().toJson(payload).getBytes(StandardCharsets.UTF_8);
    }

    private static Jsonb json() {
        Jsonb j = jsonb;
        if (j == null) {
            synchronized (GuardedMethod.class) {
                if (jsonb == null) {
                    jsonb = JsonbBuilder.create();
                }
                j = jsonb;
            }
        }
        return j;
    }

    private static Object skippedResult(Class<?> type) {
        if (!type.isPrimitive() || type == void.class) {
            return null;
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == char.class) {
            return '\0';
        }
        return switch (type.getName()) {
            case "byte" -> (byte) 0;
            case "short" -> (short) 0;
            case "int" -> 0;
            case "long" -> 0L;
            case "float" -> 0f;
            default -> 0d;
        };
    }
}
