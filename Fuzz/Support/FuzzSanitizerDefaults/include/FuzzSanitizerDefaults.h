#ifndef FUZZ_SANITIZER_DEFAULTS_H
#define FUZZ_SANITIZER_DEFAULTS_H

// AddressSanitizer's and LeakSanitizer's defaults for the fuzz targets that run Swift
// concurrency (see FuzzSanitizerDefaults.c). Linking this target is enough; it declares
// nothing.

#endif
