// JOSE tests are being written.
