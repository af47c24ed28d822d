#ifndef WALLET_CQRENCODE_SHIM_H
#define WALLET_CQRENCODE_SHIM_H
// libqrencode (Debian libqrencode-dev): QR symbols for the CLI's terminal output only.
#include <qrencode.h>
#endif
