// Mdoc tests are being written.
