"""A TCP proxy on loopback that a test can cut, to drop Herald's connection to its server the
way a flaky network does: both sides see their connection end in the middle of the stream,
with whatever was in flight in the proxy lost.

    proxy = TcpProxy(server.c2s_port)     # listens on 127.0.0.1, a port of its own
    config = client_config(server, port=proxy.port)
    proxy.cut()                           # every open connection reset; new ones still welcome
    proxy.stop()
"""

import socket
import struct
import threading


class TcpProxy:
    def __init__(self, target_port, target_host="127.0.0.1"):
        self._target = (target_host, target_port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open = []          # (client, upstream) pairs
        self.connections = 0     # accepted so far
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.append((client, upstream))
                self.connections += 1
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        """Resets every open connection (RST to both ends, nothing flushed)."""
        with self._lock:
            pairs, self._open = self._open, []
        for pair in pairs:
            for s in pair:
                try:
                    # No lingering on what is unsent; shutting down wakes the pumps, whose
                    # blocked reads would otherwise keep the socket open.
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def stop(self):
        self._stopped = True
        try:
            self._listener.close()
        except OSError:
            pass
        self.cut()
