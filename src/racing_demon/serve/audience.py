"""Who is attached to a table: each connection, the first record it asked for, and the seat
it plays (None: a spectator); messages to all of them, to one seat's, or to records'
readers from a seq on."""

from __future__ import annotations

from collections.abc import Mapping

from racing_demon.serve import protocol
from racing_demon.serve.protocol import ServeCode
from racing_demon.serve.seats import Peer


class Audience:
    def __init__(self) -> None:
        self._first: dict[Peer, int] = {}  # each peer: the first seq it asked for
        self._newest: dict[int, Peer] = {}  # each seat: the connection that synced last
        self._closed: tuple[ServeCode, str] | None = None  # close_all's, for later joiners

    def syncing(self, peer: Peer) -> None:
        """``peer`` synced: it is its seat's newest connection, while it catches up."""
        if peer.seat is not None:
            self._newest[peer.seat] = peer

    def join(self, peer: Peer, from_seq: int) -> bool:
        """Attach ``peer`` once it caught up; False (and ``peer`` closed) if its seat synced
        again meanwhile or the table closed (``close_all``) while it caught up.

        A seat has one connection, the one that synced last: an older one is replaced (an
        ``error`` REPLACED, then closed), since a client that reconnects may not know its
        old connection is half dead, and one seat's messages must not go to two clients.
        The other peers hear that the seat connected if it was not."""
        if self._closed is not None:  # the table closed while this peer caught up
            _close(peer, *self._closed)
            return False
        seat = peer.seat
        if seat is not None and self._newest.get(seat, peer) is not peer:
            _replace(peer)  # a newer connection synced while this one caught up
            return False
        replaced = [other for other in self._first if seat is not None and other.seat == seat]
        for old in replaced:
            del self._first[old]
            _replace(old)
        self._first[peer] = from_seq
        if seat is not None and not replaced:
            self.broadcast(protocol.seat(seat=seat, connected=True), but=peer)
        return True

    def leave(self, peer: Peer) -> None:
        if peer.seat is not None and self._newest.get(peer.seat) is peer:
            del self._newest[peer.seat]
        if self._first.pop(peer, None) is None:
            return
        seat = peer.seat
        if seat is not None and not any(other.seat == seat for other in self._first):
            self.broadcast(protocol.seat(seat=seat, connected=False))

    def record(self, seq: int, message: Mapping[str, object]) -> None:
        """Record ``seq`` to every peer that asked for it."""
        text: str | None = None
        for peer, first in list(self._first.items()):
            if first <= seq:
                if text is None:
                    text = protocol.encode(message)
                peer.send_encoded(message, text)

    def to_seat(self, seat: int, message: Mapping[str, object]) -> None:
        for peer in list(self._first):
            if peer.seat == seat:
                peer.send(message)

    def broadcast(self, message: Mapping[str, object], but: Peer | None = None) -> None:
        for peer in list(self._first):
            if peer is not but:
                peer.send(message)

    def seats(self) -> list[int | None]:
        return [peer.seat for peer in self._first]

    def each(self) -> list[Peer]:
        return list(self._first)

    def close_all(self, reason: ServeCode, message: str) -> None:
        """An ``error`` with ``reason`` to every peer, then its connection closed; the same
        to a peer that finishes catching up afterwards."""
        self._closed = (reason, message)
        for peer in list(self._first):
            _close(peer, reason, message)


def _close(peer: Peer, reason: ServeCode, message: str) -> None:
    peer.send(protocol.error_message(reason, message))
    peer.close(reason)


def _replace(peer: Peer) -> None:
    _close(peer, ServeCode.REPLACED, "the seat connected again")
