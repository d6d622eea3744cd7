package dev.onceonly.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A TCP proxy on loopback in front of a server, for faults the server itself cannot be made to have
 * (it may be the machine's one, which other tests use):
 * <ul>
 *   <li>it can lose one reply: once {@link #dropNextReply} is armed, the next bytes the server sends
 *       back are swallowed and the client's connection is cut, after the server has done the work.
 *       That is a command applied whose reply never arrived;</li>
 *   <li>it can be cut ({@link #cut}): every open connection is closed and new ones are closed as soon
 *       as they are accepted, as when the server is down, until {@link #restore}.</li>
 * </ul>
 */
public final class TcpProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final AtomicBoolean dropNext = new AtomicBoolean();
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private volatile boolean cut;
    private final Thread acceptor;

    public TcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::accept, "tcp-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** The next reply from the server to any client is lost, and that client's connection cut. */
    public void dropNextReply() {
        dropNext.set(true);
    }

    /** Closes every connection and refuses new ones until {@link #restore()}. */
    public void cut() {
        cut = true;
        open.forEach(TcpProxy::closeQuietly);
        open.clear();
    }

    /** Takes connections again. */
    public void restore() {
        cut = false;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (cut) {
                    closeQuietly(client);
                    continue;
                }
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                open.add(client);
                open.add(server);
                pump(client, server, false);
                pump(server, client, true);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void pump(Socket from, Socket to, boolean replies) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                    if (replies && dropNext.compareAndSet(true, false)) {
                        to.close();
                        from.close();
                        return;
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        cut();
        listener.close();
    }
}
