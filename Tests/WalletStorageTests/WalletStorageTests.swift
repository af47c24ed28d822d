// WalletStorage tests are being written.
