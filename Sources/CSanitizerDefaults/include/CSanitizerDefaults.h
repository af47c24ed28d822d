#ifndef C_SANITIZER_DEFAULTS_H
#define C_SANITIZER_DEFAULTS_H

// LeakSanitizer's built-in suppressions for the SDK's test bundle and executables.
// LeakSanitizer calls this hook itself when the program is built with
// `--sanitize=address`; in any other build nothing calls it.
const char *__lsan_default_suppressions(void);

#endif
