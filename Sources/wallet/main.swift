// The wallet CLI entry point (being written).
