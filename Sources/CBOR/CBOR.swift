// The CBOR module (RFC 8949). Sources are being written; this line keeps the target non-empty.
