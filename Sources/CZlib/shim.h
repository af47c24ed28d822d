#ifndef WALLET_CZLIB_SHIM_H
#define WALLET_CZLIB_SHIM_H
// zlib for the raw DEFLATE of JWE `zip: DEF` (RFC 7516 §4.1.3).
#include <zlib.h>
// deflateInit2/inflateInit2 are macros over the *_ functions.
static inline int wallet_deflateInit2(z_streamp strm, int level) {
    return deflateInit2(strm, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}
static inline int wallet_inflateInit2(z_streamp strm) { return inflateInit2(strm, -15); }
#endif
