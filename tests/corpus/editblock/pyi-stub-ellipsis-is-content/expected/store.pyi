from typing import Protocol

class Store(Protocol):
    def get(self, key: str) -> bytes:
        """Read a value."""
        ...

    def put(self, key: str, value: bytes) -> None:
        """Write a value."""
        ...
