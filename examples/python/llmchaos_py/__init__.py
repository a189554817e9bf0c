"""The Python example clients' shared code: the exec contract, one chat call per dialect through the
official SDKs, the wire watcher and the team's policy loop (SPEC section 3), the Python counterpart of
examples/sdk/lib/*.mjs."""
