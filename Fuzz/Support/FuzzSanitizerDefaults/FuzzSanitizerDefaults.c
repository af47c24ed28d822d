#include "FuzzSanitizerDefaults.h"

// Sanitizer defaults for the fuzz targets that run whole sessions (FuzzIssuanceFlow,
// FuzzPresentationFlow) and for FuzzSessionEstablishment: the memory of the first and the
// last grew under AddressSanitizer's defaults. Options given in ASAN_OPTIONS or
// LSAN_OPTIONS still apply on top of these.

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

// A 16 MB quarantine instead of AddressSanitizer's 256 MB, and allocation and free
// stacks of 8 frames instead of 30. Use after free is still caught while the freed block
// is among the last 16 MB freed, and a report still names the first eight frames that
// allocated and freed it.
// - The quarantine: one FuzzIssuanceFlow input runs a whole issuance, about a megabyte of
//   short-lived allocations on many threads; with the default quarantine the process grew
//   past libFuzzer's 1 GB RSS limit within ten minutes (900 MB after 6,700 inputs, 22 a
//   second), and ran a quarter as fast. FuzzSessionEstablishment sat near 500 MB from
//   its first 65,000 inputs.
// - The stacks: AddressSanitizer keeps every distinct stack it records for the life of
//   the process, and across varied inputs these targets keep recording new ones (for
//   FuzzIssuanceFlow, the frame-pointer walk through Swift's async frames reads different
//   words each time). FuzzIssuanceFlow over the same files, run once each: 244 MB after
//   1,000 and 427 MB after 6,000 with 30 frames; 165 MB and 183 MB (after 3,000) with 8;
//   144-146 MB with none; 68 MB flat without AddressSanitizer.
// Five-minute campaigns with both (Fuzz/run.sh's limits): FuzzIssuanceFlow 223 MB after
// 19,280 inputs (625 MB with the quarantine alone), FuzzSessionEstablishment 156 MB after
// 6.0 M (861 MB after 3.7 M with neither).
__attribute__((used))
const char *__asan_default_options(void) {
    return "quarantine_size_mb=16:malloc_context_size=8";
}
