// wallet-bench entry point (being written).
