// SDJWT tests are being written.
