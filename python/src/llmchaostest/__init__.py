"""llmchaostest: llmchaos fault-injection cases inside your own tests (pytest plugin: llmchaostest.plugin)."""
from .binary import BinaryNotFound, find_binary
from .server import Server, ServerError, SessionClient
from .session import Case, CaseFailed, Verdict

__all__ = ["BinaryNotFound", "Case", "CaseFailed", "Server", "ServerError", "SessionClient", "Verdict", "find_binary"]
__version__ = "0.1.0"
