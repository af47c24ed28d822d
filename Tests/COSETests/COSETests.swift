// COSE tests are being written.
