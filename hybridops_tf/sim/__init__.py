"""The simulated cloud: a real Terraform/OpenTofu provider whose objects live on disk.

Nothing here imports the rest of hybridops_tf: the provider runs as its own process,
launched by the engine, and must start fast and stand alone. Heavy imports (grpc, the
generated protocol messages) live only in `serve.py`, `servicer.py` and `wire.py`;
`store.py`, `faults.py`, `kinds.py` and `install.py` stay cheap so `hyops sim ls` and the core can use them freely.
"""
