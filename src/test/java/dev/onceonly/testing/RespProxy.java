package dev.onceonly.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Redis protocol proxy on loopback in front of a Redis: it reads each command a client sends
 * (RESP), forwards it and copies back exactly one reply. So it can
 * <ul>
 *   <li>count the commands clients send ({@code INFO commandstats} counts the commands a script
 *       runs too, and cannot tell them apart), and the round trips they take: a command its
 *       client sent after it had been answered everything starts one, so the commands of a
 *       pipeline, sent together, count as one;</li>
 *   <li>act as a Redis before 7.0: refuse {@code SET ... NX ... GET} as those servers do
 *       ({@code ERR syntax error}, nothing written), answering it itself. Only Redis 7 is installed
 *       here; this is how the claim's fallback to the script meets a server that refuses the
 *       native command.</li>
 * </ul>
 */
public final class RespProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final boolean refuseSetNxGet;
    private final AtomicInteger commands = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final AtomicInteger roundTrips = new AtomicInteger();
    private final List<Socket> open = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * @param targetPort     the Redis on loopback to forward to
     * @param refuseSetNxGet whether to refuse {@code SET} with {@code NX} and {@code GET}, as Redis before 7.0
     */
    public RespProxy(int targetPort, boolean refuseSetNxGet) throws IOException {
        this.targetPort = targetPort;
        this.refuseSetNxGet = refuseSetNxGet;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "resp-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** {@return how many commands clients sent so far, refused ones included} */
    public int commands() {
        return commands.get();
    }

    /**
     * {@return how many round trips clients took so far: commands a client sent when it had been
     * answered everything it sent before (a pipeline's commands, sent together, start one)}
     */
    public int roundTrips() {
        return roundTrips.get();
    }

    /** {@return how many {@code SET NX GET} commands were refused so far} */
    public int refused() {
        return refused.get();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                open.add(client);
                open.add(server);
                Thread t = new Thread(() -> serve(client, server), "resp-proxy-connection");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket client, Socket server) {
        try (client; server) {
            InputStream fromClient = new BufferedInputStream(client.getInputStream());
            OutputStream toClient = client.getOutputStream();
            InputStream fromServer = new BufferedInputStream(server.getInputStream());
            OutputStream toServer = server.getOutputStream();
            // Whether the client had nothing more to send when it was last answered: its next command
            // then waited for that answer, a new round trip. Checked before the answer is written, so
            // a command sent only after the answer arrived can never look pipelined.
            boolean idle = true;
            while (true) {
                ByteArrayOutputStream raw = new ByteArrayOutputStream();
                List<String> args = command(fromClient, raw);
                commands.incrementAndGet();
                if (idle) {
                    roundTrips.incrementAndGet();
                }
                if (refuseSetNxGet && setWithNxAndGet(args)) {
                    refused.incrementAndGet();
                    idle = fromClient.available() == 0;
                    toClient.write("-ERR syntax error\r\n".getBytes(StandardCharsets.US_ASCII));
                } else {
                    raw.writeTo(toServer);
                    toServer.flush();
                    ByteArrayOutputStream reply = new ByteArrayOutputStream();
                    reply(fromServer, reply);
                    idle = fromClient.available() == 0;
                    reply.writeTo(toClient);
                }
                toClient.flush();
            }
        } catch (IOException e) {
            // either side closed
        } finally {
            open.remove(client);
            open.remove(server);
        }
    }

    private static boolean setWithNxAndGet(List<String> args) {
        if (args.isEmpty() || !args.get(0).equalsIgnoreCase("SET")) {
            return false;
        }
        List<String> options = args.subList(Math.min(3, args.size()), args.size()).stream()
                .map(a -> a.toUpperCase(Locale.ROOT)).toList();
        return options.contains("NX") && options.contains("GET");
    }

    /** One command as a client sends it: an array of bulk strings. */
    private static List<String> command(InputStream in, ByteArrayOutputStream raw) throws IOException {
        String header = line(in, raw);
        if (header.charAt(0) != '*') {
            throw new IOException("not a RESP command: " + header);
        }
        int n = Integer.parseInt(header.substring(1));
        List<String> args = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String len = line(in, raw);
            byte[] arg = in.readNBytes(Integer.parseInt(len.substring(1)) + 2);
            raw.write(arg);
            args.add(new String(arg, 0, arg.length - 2, StandardCharsets.UTF_8));
        }
        return args;
    }

    /** Copies one whole reply, RESP2 or RESP3, nested aggregates included. */
    private static void reply(InputStream in, ByteArrayOutputStream out) throws IOException {
        String header = line(in, out);
        char type = header.charAt(0);
        switch (type) {
            case '$', '!', '=' -> {
                int len = Integer.parseInt(header.substring(1));
                if (len >= 0) {
                    out.write(in.readNBytes(len + 2));
                }
            }
            case '*', '~', '>', '%', '|' -> {
                int n = Integer.parseInt(header.substring(1));
                int elements = type == '%' || type == '|' ? 2 * n : n;
                for (int i = 0; i < elements; i++) {
                    reply(in, out);
                }
                if (type == '|') {
                    reply(in, out); // attributes come before the reply they describe
                }
            }
            default -> {
                // simple string, error, integer, null, double, boolean, big number: one line
            }
        }
    }

    private static String line(InputStream in, ByteArrayOutputStream copy) throws IOException {
        StringBuilder b = new StringBuilder();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new EOFException();
            }
            b.append((char) c);
        }
        in.read(); // '\n'
        String line = b.toString();
        copy.write((line + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        return line;
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket s : open) {
            s.close();
        }
    }
}
