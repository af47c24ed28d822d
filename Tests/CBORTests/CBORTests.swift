// CBOR test suites are being written.
