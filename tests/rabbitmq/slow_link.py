"""A TCP relay on loopback that holds every chunk of bytes for a while in each direction:
a slow network between a client and the real RabbitMQ server (no broker is mocked).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

from omconnect.testing.processes import LOOPBACK


class SlowLink:
    """Relays ``127.0.0.1:<port>`` to ``target``, sleeping ``delay`` seconds before
    passing on each chunk read. Stop it with :meth:`close`.
    """

    def __init__(self, target: tuple[str, int], delay: float) -> None:
        self._target = target
        self._delay = delay
        self._server = socket.create_server((LOOPBACK, 0))
        self.port = self._server.getsockname()[1]
        self._closed = False
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._target)
            self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                time.sleep(self._delay)
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        """Stop accepting and drop every relayed connection."""
        self._closed = True
        with contextlib.suppress(OSError):
            self._server.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()
