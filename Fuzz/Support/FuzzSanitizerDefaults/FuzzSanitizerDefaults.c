#include "FuzzSanitizerDefaults.h"

// Sanitizer defaults for the fuzz targets that run whole sessions (FuzzIssuanceFlow).
// Options given in ASAN_OPTIONS or LSAN_OPTIONS still apply on top of these.

// The LeakSanitizer report these targets suppress. libFuzzer checks for leaks after each
// input, and a Swift object still alive then (a session's driver finishing after its
// terminal state), its last weak reference gone, has its weak-reference side table
// (swift_weakInit -> formWeakReference) reported as a direct leak: the runtime keeps the
// side table's address only in the object's reference-count word, shifted right by 3
// with flag bits set, so no word in memory holds it. Sources/CSanitizerDefaults
// suppresses the same report for the test suite, with a reproduction outside the SDK. A
// leaked object itself is still reported: it is its own allocation, not a side table.
__attribute__((used))
const char *__lsan_default_suppressions(void) {
    return "leak:formWeakReference\n";
}

// A 16 MB quarantine instead of AddressSanitizer's 256 MB. One input runs a whole
// issuance, about a megabyte of short-lived allocations on many threads; with the
// default quarantine the process grew past libFuzzer's 1 GB RSS limit within ten
// minutes (900 MB after 6,700 inputs, 22 inputs a second), and ran a quarter as fast.
// Use after free is still caught while the freed block is among the last 16 MB freed.
__attribute__((used))
const char *__asan_default_options(void) {
    return "quarantine_size_mb=16";
}
